package samples

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"runtime"
	"strings"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// encodedHeader is a V2 compressed histogram of the given geometry with no
// counts: the 40-byte header alone, as a hostile document carries it.
func encodedHeader(t *testing.T, lowest, highest int64, digits int32) string {
	t.Helper()
	var h bytes.Buffer
	for _, v := range []any{hdrhistogram.V2EncodingCookieBase | 0x10, int32(0), int32(0), digits, lowest, highest, float64(1)} {
		if err := binary.Write(&h, binary.BigEndian, v); err != nil {
			t.Fatal(err)
		}
	}
	var z bytes.Buffer
	w := zlib.NewWriter(&z)
	w.Write(h.Bytes())
	w.Close()
	var out bytes.Buffer
	binary.Write(&out, binary.BigEndian, hdrhistogram.V2CompressedEncodingCookieBase|0x10)
	binary.Write(&out, binary.BigEndian, int32(z.Len()))
	out.Write(z.Bytes())
	return base64.StdEncoding.EncodeToString(out.Bytes())
}

// allocated is the bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestDecodeHistBoundsTheHeader: a 56-byte histogram whose header claims
// 1..2^63 at 5 digits is refused before its 49 MB counts array is allocated;
// gab's own histograms decode in what their geometry needs.
func TestDecodeHistBoundsTheHeader(t *testing.T) {
	hostile := encodedHeader(t, 1, 1<<62, 5)
	if n := len(hostile) * 3 / 4; n > 60 {
		t.Fatalf("the hostile histogram is %d bytes", n)
	}
	var err error
	if used := allocated(func() { _, err = DecodeHist(hostile) }); used > 256<<10 {
		t.Errorf("refusing the header allocated %d bytes", used)
	}
	if err == nil || !strings.Contains(err.Error(), "beyond gab's") {
		t.Errorf("hostile header: %v", err)
	}
	for _, g := range []struct {
		lowest, highest int64
		digits          int32
	}{{0, HistHighestUS, 3}, {1, HistHighestUS * 2, 3}, {1, HistHighestUS, 4}, {1, HistHighestUS, 0}, {1000, 1000, 3}} {
		if _, err := DecodeHist(encodedHeader(t, g.lowest, g.highest, g.digits)); err == nil {
			t.Errorf("%+v: decoded", g)
		}
	}

	h := NewHist()
	for v := int64(1); v < 100_000; v += 7 {
		h.RecordValue(v)
	}
	data, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	var back *hdrhistogram.Histogram
	if used := allocated(func() { back, err = DecodeHist(string(data)) }); used > 400<<10 {
		t.Errorf("decoding gab's own histogram allocated %d bytes", used)
	}
	if err != nil || !back.Equals(h) {
		t.Fatalf("gab's own histogram: %v", err)
	}
	small := hdrhistogram.New(1, 60_000_000, 2) // within gab's geometry
	small.RecordValue(5)
	data, _ = small.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if _, err := DecodeHist(string(data)); err != nil {
		t.Errorf("a narrower histogram: %v", err)
	}
	for _, bad := range []string{"", "!!", base64.StdEncoding.EncodeToString([]byte("1234567")), hostile[:len(hostile)/2]} {
		if _, err := DecodeHist(bad); err == nil {
			t.Errorf("%q decoded", bad)
		}
	}
}

// FuzzDecodeHist: no input panics, and what decodes stays within gab's
// geometry.
func FuzzDecodeHist(f *testing.F) {
	h := NewHist()
	h.RecordValue(42)
	data, _ := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	f.Add(string(data))
	f.Add("HISTFAAAAB14nJNpmSzMwMDAxgABzFCaEUzKT2i0AQA7LQRF")
	f.Fuzz(func(t *testing.T, s string) {
		h, err := DecodeHist(s)
		if err != nil {
			return
		}
		if h.LowestTrackableValue() < HistLowestUS || h.HighestTrackableValue() > HistHighestUS || h.SignificantFigures() > HistDigits {
			t.Fatalf("decoded %d..%d at %d", h.LowestTrackableValue(), h.HighestTrackableValue(), h.SignificantFigures())
		}
	})
}
