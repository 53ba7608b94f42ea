// Reads an HdrHistogram interval log with hdr-histogram-js's
// HistogramLogReader and prints one JSON line per interval histogram: its tag,
// start and end (ms since the epoch, as the reader computes them), total
// count, max, and for each percentile of the comma-separated list in the
// second argument two values, each capped by
// the line's exact Interval_Max (in ms):
//   at_rank: the value at the nearest rank of HdrHistogram's Go, C and Python
//            libraries, p/100*count rounded half up, within 1..count;
//   own:     getValueAtPercentile(p) as hdr-histogram-js computes it (it
//            rounds p/100*count up, as HdrHistogram's Java library does).
const fs = require("fs");
const hdr = require("hdr-histogram-js");

const PERCENTS = process.argv[3].split(",").map(Number);

const content = fs.readFileSync(process.argv[2], "utf8");
const maxes = content
  .split(/\r\n|\r|\n/)
  .filter((l) => l !== "" && !l.startsWith("#") && !l.startsWith('"'))
  .map((l) => {
    const t = l.split(",");
    return Number.parseFloat(t[l.startsWith("Tag=") ? 3 : 2]);
  });
const reader = new hdr.HistogramLogReader(content);
const out = [];
for (let h, i = 0; (h = reader.nextIntervalHistogram()) !== null; i++) {
  const total = h.totalCount;
  const cap = Math.round(maxes[i] * 1000);
  const atRank = [];
  const own = [];
  for (const p of PERCENTS) {
    if (total === 0) {
      atRank.push(0);
      own.push(0);
      continue;
    }
    const rank = Math.min(Math.max(Math.floor((p / 100) * total + 0.5), 1), total);
    // 100*rank/total names that rank under hdr-histogram-js's own rounding.
    atRank.push(Math.min(h.getValueAtPercentile((100 * rank) / total), cap));
    own.push(Math.min(h.getValueAtPercentile(p), cap));
  }
  out.push({
    tag: h.tag,
    start_ms: h.startTimeStampMsec,
    end_ms: h.endTimeStampMsec,
    count: total,
    max: total > 0 ? h.maxValue : 0,
    at_rank: atRank,
    own: own,
  });
}
process.stdout.write(JSON.stringify(out) + "\n");
