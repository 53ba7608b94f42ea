package hpackdec

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"golang.org/x/net/http2/hpack"
)

// nginxBlock is the head nginx 1.22 sends for a 100-byte static file over
// HTTP/2: every field but :status a literal with incremental indexing, five
// of them Huffman-coded.
var nginxBlock = mustHex("88 76 89 aa 63 55 e5 80 ae 21 2e 1f 61 96 df 69 7e 94 00 54 be 52 28 20 09 c5 00 dd c6 c3 70 4d 29 8b 46 ff" +
	" 5f 87 49 7c a5 8a e8 19 aa 5c 03 31 30 30 6c 96 df 69 7e 94 00 54 be 52 28 20 09 c5 00 cd c6 43 71 b6 54 c5 a3 7f" +
	" 00 83 2a 47 37 8b fe 5c 8c 05 66 51 be b3 8d 7f 3f 00 89 19 08 5a d2 b5 83 aa 62 a3 84 8f d2 4a 8f")

func mustHex(s string) []byte {
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		panic(err)
	}
	return b
}

// appendInt appends an HPACK integer with an n-bit prefix, the byte's other
// bits set to flags.
func appendInt(dst []byte, n uint8, flags byte, v uint64) []byte {
	max := uint64(1)<<n - 1
	if v < max {
		return append(dst, flags|byte(v))
	}
	dst = append(dst, flags|byte(max))
	for v -= max; v >= 0x80; v >>= 7 {
		dst = append(dst, byte(v)|0x80)
	}
	return append(dst, byte(v))
}

// pair decodes the same blocks with this package and with x/net.
type pair struct {
	ours   *Decoder
	xnet   *hpack.Decoder
	xf, of []hpack.HeaderField
	oEmit  func(hpack.HeaderField)
}

func newPair(size uint32) *pair {
	p := &pair{ours: New(size)}
	p.xnet = hpack.NewDecoder(size, func(f hpack.HeaderField) { p.xf = append(p.xf, hpack.HeaderField{Name: f.Name, Value: f.Value}) })
	p.oEmit = func(f hpack.HeaderField) { p.of = append(p.of, f) }
	return p
}

// block decodes one block with both, fed to x/net in the given fragments,
// and reports a difference in fields or in whether it failed.
func (p *pair) block(frags [][]byte, emit bool) (failed bool, diff string) {
	p.xf, p.of = p.xf[:0], p.of[:0]
	p.xnet.SetEmitEnabled(emit)
	var xerr error
	for _, f := range frags {
		if _, xerr = p.xnet.Write(f); xerr != nil {
			break
		}
	}
	if xerr == nil {
		xerr = p.xnet.Close()
	} else {
		p.xnet.Close() // ends the block: a failed probe of the table must not leave x/net mid-block
	}
	oEmit := p.oEmit
	if !emit {
		oEmit = nil
	}
	oerr := p.ours.Decode(bytes.Join(frags, nil), oEmit)
	switch {
	case (xerr == nil) != (oerr == nil):
		return true, fmt.Sprintf("x/net error %v, ours %v", xerr, oerr)
	case xerr != nil:
		return true, ""
	case fmt.Sprint(p.xf) != fmt.Sprint(p.of):
		return false, fmt.Sprintf("x/net fields %v\nours %v", p.xf, p.of)
	}
	return false, ""
}

// table compares the two dynamic tables by decoding each of their indices.
func (p *pair) table() string {
	for i := uint64(62); ; i++ {
		failed, diff := p.block([][]byte{appendInt(nil, 7, 0x80, i)}, true)
		if diff != "" {
			return fmt.Sprintf("index %d: %s", i, diff)
		}
		if failed {
			return ""
		}
	}
}

func TestStaticTableAsXNet(t *testing.T) {
	p := newPair(4096)
	for i := uint64(0); i <= 62; i++ {
		failed, diff := p.block([][]byte{appendInt(nil, 7, 0x80, i)}, true)
		if diff != "" {
			t.Fatalf("index %d: %s", i, diff)
		}
		if want := i == 0 || i == 62; failed != want {
			t.Fatalf("index %d: failed %v, want %v", i, failed, want)
		}
	}
}

// TestNginxHeadsAsXNet decodes nginx's head many times over, as a run does:
// each adds seven entries, so the table wraps and evicts again and again.
func TestNginxHeadsAsXNet(t *testing.T) {
	p := newPair(4096)
	for i := 0; i < 100; i++ {
		if failed, diff := p.block([][]byte{nginxBlock}, i%3 != 0); failed || diff != "" {
			t.Fatalf("block %d: failed %v %s", i, failed, diff)
		}
		if diff := p.table(); diff != "" {
			t.Fatalf("after block %d: %s", i, diff)
		}
	}
	want := `[{:status 200} {server nginx/1.22.1} {date Tue, 01 Dec 2026 05:51:24 GMT} {content-type text/plain} {content-length 100} {last-modified Tue, 01 Dec 2026 03:31:53 GMT} {etag "6b0e3fa9-64"} {accept-ranges bytes}]`
	var got []string
	if err := p.ours.Decode(nginxBlock, func(f hpack.HeaderField) { got = append(got, "{"+f.Name+" "+f.Value+"}") }); err != nil {
		t.Fatal(err)
	}
	if s := "[" + strings.Join(got, " ") + "]"; s != want {
		t.Fatalf("fields %s\nwant %s", s, want)
	}
}

// TestEncoderBlocksAsXNet decodes what x/net's encoder makes of changing
// fields, which refers back to the dynamic table and updates its size.
func TestEncoderBlocksAsXNet(t *testing.T) {
	var buf bytes.Buffer
	enc := hpack.NewEncoder(&buf)
	p := newPair(4096)
	for i := 0; i < 300; i++ {
		buf.Reset()
		if i%50 == 7 {
			enc.SetMaxDynamicTableSizeLimit(uint32(256 + 97*(i%5)))
			enc.SetMaxDynamicTableSize(uint32(256 + 97*(i%5)))
		}
		for _, f := range []hpack.HeaderField{
			{Name: ":status", Value: fmt.Sprint(200 + i%3)},
			{Name: "date", Value: fmt.Sprintf("Tue, 01 Dec 2026 05:%02d:%02d GMT", i/60, i%60)},
			{Name: "x-request", Value: strings.Repeat("r", i%40)},
			{Name: "set-cookie", Value: "secret", Sensitive: true},
			{Name: "content-length", Value: fmt.Sprint(i)},
		} {
			if err := enc.WriteField(f); err != nil {
				t.Fatal(err)
			}
		}
		b := buf.Bytes()
		if failed, diff := p.block([][]byte{b[:len(b)/2], b[len(b)/2:]}, true); failed || diff != "" {
			t.Fatalf("block %d: failed %v %s", i, failed, diff)
		}
		if diff := p.table(); diff != "" {
			t.Fatalf("after block %d: %s", i, diff)
		}
	}
}

// TestErrorsAsXNet covers each way a block can be wrong.
func TestErrorsAsXNet(t *testing.T) {
	for name, block := range map[string][]byte{
		"index 0":                   {0x80},
		"index past the table":      appendInt(nil, 7, 0x80, 70),
		"name index past the table": appendInt(nil, 6, 0x40, 99),
		"truncated integer":         {0xff, 0x80},
		"integer overflow":          append([]byte{0xff}, bytes.Repeat([]byte{0xff}, 10)...),
		"truncated string":          {0x40, 0x05, 'a', 'b'},
		"truncated name":            {0x00},
		"bad Huffman padding":       {0x00, 0x81, 'a', 0x81, 0x00},
		"bad Huffman unindexed":     {0x0f, 0x0d, 0x81, 0x00},
		"bad Huffman indexed":       {0x7f, 0x0d, 0x81, 0x00},
		"size update too large":     appendInt(nil, 5, 0x20, 4097),
		"size update after a field": append([]byte{0x40, 0x01, 'a', 0x01, 'b'}, 0x20),
	} {
		t.Run(name, func(t *testing.T) {
			p := newPair(4096)
			failed, diff := p.block([][]byte{block}, true)
			if diff != "" || !failed {
				t.Fatalf("failed %v %s", failed, diff)
			}
		})
	}
	// Without emitting, a string nobody reads is not decoded, so its bad
	// Huffman coding goes unnoticed, as with x/net.
	p := newPair(4096)
	if failed, diff := p.block([][]byte{{0x0f, 0x0d, 0x81, 0x00}}, false); failed || diff != "" {
		t.Fatalf("failed %v %s", failed, diff)
	}
	// A size update anywhere in a block is accepted while the table is empty.
	if failed, diff := p.block([][]byte{{0x88, 0x3f, 0x01, 0x88}}, true); failed || diff != "" {
		t.Fatalf("failed %v %s", failed, diff)
	}
}

func TestDecodeDoesNotAllocate(t *testing.T) {
	d := New(4096)
	emit := func(hpack.HeaderField) {}
	if err := d.Decode(nginxBlock, emit); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(1000, func() {
		if err := d.Decode(nginxBlock, emit); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Fatalf("%v allocations per head", n)
	}
}

// A server that never repeats a string fills the interned strings up to
// their bound, no further.
func TestInternedStringsBounded(t *testing.T) {
	d := New(4096)
	var buf bytes.Buffer
	enc := hpack.NewEncoder(&buf)
	for i := 0; i < 1000; i++ {
		buf.Reset()
		enc.WriteField(hpack.HeaderField{Name: "x-unique", Value: fmt.Sprint("value-", i)})
		enc.WriteField(hpack.HeaderField{Name: "x-long", Value: strings.Repeat("z", internLen*2) + fmt.Sprint(i)})
		if err := d.Decode(buf.Bytes(), func(hpack.HeaderField) {}); err != nil {
			t.Fatal(err)
		}
		if len(d.strs.huff) > internMax || len(d.strs.plain) > internMax {
			t.Fatalf("after %d heads: %d and %d interned strings, bound %d", i+1, len(d.strs.huff), len(d.strs.plain), internMax)
		}
	}
	if len(d.strs.huff) == 0 {
		t.Fatal("nothing interned")
	}
	for k := range d.strs.huff {
		if len(k) > internLen {
			t.Fatalf("interned a %d-byte string, bound %d", len(k), internLen)
		}
	}
}

// FuzzDecoderAsXNet holds this decoder to x/net's on arbitrary input: the
// first byte picks the table size and which blocks emit, the rest is split
// into blocks at 0xf1 0xf2 and into fragments (for x/net) at 0xf3. After
// each block the two tables must hold the same entries.
func FuzzDecoderAsXNet(f *testing.F) {
	f.Add(append([]byte{0x00}, nginxBlock...))
	f.Add(append(append(append([]byte{0x05}, nginxBlock...), 0xf1, 0xf2), nginxBlock...))
	f.Add([]byte{0x01, 0x3f, 0xe1, 0x1f, 0x40, 0x01, 'a', 0x01, 'b', 0xf1, 0xf2, 0xbe})
	f.Add([]byte{0x02, 0x20, 0x40, 0x01, 'a', 0x01, 'b', 0xf1, 0xf2, 0x3f, 0x01, 0xbe})
	f.Add([]byte{0x00, 0x40, 0x81, 0xff, 0xf3, 0x01, 'b'})
	f.Fuzz(func(t *testing.T, data []byte) {
		// Each block is followed by a probe of every table index, so the
		// work is bounded: at most 4 KiB of input and 32 blocks.
		if len(data) == 0 || len(data) > 4096 {
			return
		}
		sizes := []uint32{4096, 100, 0, 64, 33, 8192, 4096, 4096}
		p := newPair(sizes[data[0]&7])
		for i, b := range bytes.SplitN(data[1:], []byte{0xf1, 0xf2}, 32) {
			failed, diff := p.block(bytes.Split(b, []byte{0xf3}), (data[0]>>(3+i%5))&1 == 0)
			if diff != "" {
				t.Fatalf("block %d: %s", i, diff)
			}
			if failed {
				return
			}
			if diff := p.table(); diff != "" {
				t.Fatalf("after block %d: %s", i, diff)
			}
		}
	})
}

func BenchmarkNginxHead(b *testing.B) {
	emit := func(hpack.HeaderField) {}
	b.Run("hpackdec", func(b *testing.B) {
		d := New(4096)
		b.ReportAllocs()
		for b.Loop() {
			if err := d.Decode(nginxBlock, emit); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("x/net", func(b *testing.B) {
		d := hpack.NewDecoder(4096, emit)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := d.Write(nginxBlock); err != nil {
				b.Fatal(err)
			}
			if err := d.Close(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
