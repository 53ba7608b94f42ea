// Package report turns a finished run into every output gab prints, in two
// steps: Summarize computes every figure once, from a client.Result and the
// command line's Options, into a Summary; then each writer formats a Summary
// to an io.Writer and computes nothing of its own.
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
// WritePercentiles (--percentiles), WriteCGI (--cgi), WriteCorrected (--rate),
// WriteExtended (--extended), WriteServerCPU (--server-pid), WriteHistogram
// (--histogram) and WriteJSON (the JSON document; NewDocument builds it, and
// docs/json-schema.json describes it for the programs that read it back).
//
// A new figure goes into the Summary (and into the Document, bumping
// SchemaVersion only when a field changes meaning), then into the writers
// that print it.
package report
