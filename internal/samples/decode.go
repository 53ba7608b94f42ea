package samples

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// DecodeHist decodes an HDR histogram in the V2 compressed base64 encoding
// (what gab's documents carry), after checking that its header claims no
// more than gab's own histograms hold (NewHist): lowest value at least
// HistLowestUS, highest at most HistHighestUS, at most HistDigits significant
// digits. A decoder allocates the counts array the header describes, so an
// unchecked 56-byte header claiming 1..2^63 at 5 digits would cost 49 MB;
// gab's geometry bounds it to about 270 KB.
func DecodeHist(data string) (*hdrhistogram.Histogram, error) {
	if err := CheckHist(data); err != nil {
		return nil, err
	}
	return hdrhistogram.Decode([]byte(data))
}

// v2HeaderLen is the length of the compressed contents' header: cookie,
// payload length, normalizing index offset, digits, lowest, highest and
// conversion ratio.
const v2HeaderLen = 40

// CheckHist checks an encoded histogram's headers as DecodeHist does: the
// outer one (cookie and compressed length) and the first 40 bytes of the
// compressed contents, without decoding the counts.
func CheckHist(data string) error {
	raw, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		return fmt.Errorf("not base64: %v", err)
	}
	if len(raw) < 8 {
		return fmt.Errorf("%d bytes, too short for a histogram", len(raw))
	}
	if binary.BigEndian.Uint32(raw)&^0xf0 != uint32(hdrhistogram.V2CompressedEncodingCookieBase) {
		return fmt.Errorf("not a V2 compressed histogram")
	}
	n := int64(int32(binary.BigEndian.Uint32(raw[4:])))
	if n < 0 || n > int64(len(raw)-8) {
		return fmt.Errorf("compressed length %d, but %d bytes follow", n, len(raw)-8)
	}
	z, err := zlib.NewReader(bytes.NewReader(raw[8 : 8+n]))
	if err != nil {
		return fmt.Errorf("compressed contents: %v", err)
	}
	defer z.Close()
	var h [v2HeaderLen]byte
	if _, err := io.ReadFull(z, h[:]); err != nil {
		return fmt.Errorf("compressed contents: %v", err)
	}
	if binary.BigEndian.Uint32(h[:])&^0xf0 != uint32(hdrhistogram.V2EncodingCookieBase) {
		return fmt.Errorf("not a V2 histogram")
	}
	digits := int32(binary.BigEndian.Uint32(h[12:]))
	lowest := int64(binary.BigEndian.Uint64(h[16:]))
	highest := int64(binary.BigEndian.Uint64(h[24:]))
	if digits < 1 || digits > HistDigits || lowest < HistLowestUS || highest > HistHighestUS || highest < 2*lowest {
		return fmt.Errorf("claims %d..%d at %d significant digits, beyond gab's %d..%d at %d",
			lowest, highest, digits, HistLowestUS, int64(HistHighestUS), HistDigits)
	}
	return nil
}
