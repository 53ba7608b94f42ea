// Package report turns a finished run into every output gab prints. A run
// exists as one record, Run: Summarize fills it from a client.Result and the
// command line's Options (gathering what the run recorded, then derive
// computing every figure that follows), MergeRuns fills it from several runs
// (the same derive), DecodeDocument from a JSON document; each writer formats
// a Run to an io.Writer and computes nothing of its own. Marshalled as it is,
// a Run is the JSON document (docs/json-schema.json); what only the outputs of
// the process that measured the run need is unexported.
//
// ab's own figures use ab's arithmetic (integer µs, truncated means,
// (µs+500)/1000 rounding, n−1 sd around the truncated mean, ab's inverted
// median rule and its floor(done·p/100) percentile index), in the named
// functions of abmath.go, so that ab's report comes out byte for byte. The
// figures beyond ab's (the phases, rate mode's corrected latencies) come from
// HDR histograms (samples.Dist) and say so in their titles; their
// percentiles, like --percentiles' and --fail-if's, take the nearest rank
// (samples.NearestRank), as HdrHistogram's ValueAtQuantile does.
//
// Writers: WriteText (ab's report), WriteHTML (-w), WriteCSV (-e),
// WriteSections (what follows ab's report: CGI, --percentiles, rate mode's
// corrected tables, --extended, --server-pid, the catalog's figures, the
// warm-up, --fail-if), WriteHistogram (--histogram), WriteHlog (--hlog),
// WriteHTMLPage (--html, gab plot) and WriteJSON (the JSON document).
//
// A figure derived from what a run records is one entry of the Catalog
// (catalog.go). A new measured distribution is the engine's (a samples.Dist
// of client.ExtraResult), one entry of measuredDists (distribution.go:
// Summarize fills it, the document writes, reads and checks it in its unit,
// MergeRuns merges it) and a catalog entry for its figures. Another new
// measurement goes into the record (a field of a section, filled by
// Summarize's gathering or computed in derive), and into the catalog;
// SchemaVersion changes only when a field changes meaning or disappears.
package report
