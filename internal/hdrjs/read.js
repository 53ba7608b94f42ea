// Reads an HdrHistogram interval log with hdr-histogram-js's
// HistogramLogReader and prints one JSON line per interval histogram: its tag,
// start and end (ms since the epoch, as the reader computes them), total
// count, max, and the value at gab's p99 rank (rank floor(count*99/100)+1,
// 1-based, capped by the line's exact Interval_Max, which is in ms).
const fs = require("fs");
const hdr = require("hdr-histogram-js");

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
  let p99 = 0;
  if (total > 0) {
    const rank = Math.min(Math.floor((total * 99) / 100 + 1e-9) + 1, total);
    p99 = Math.min(h.getValueAtPercentile((100 * rank) / total), Math.round(maxes[i] * 1000));
  }
  out.push({
    tag: h.tag,
    start_ms: h.startTimeStampMsec,
    end_ms: h.endTimeStampMsec,
    count: total,
    max: total > 0 ? h.maxValue : 0,
    p99: p99,
  });
}
process.stdout.write(JSON.stringify(out) + "\n");
