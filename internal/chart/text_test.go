package chart

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestPrintable(t *testing.T) {
	for in, want := range map[string]string{
		"plain µs text, 99.9 %":    "plain µs text, 99.9 %",
		"a\nb\tc\rd\x00e\x1bf\x7f": `a\x0ab\x09c\x0dd\x00e\x1bf\x7f`,
		"C1 \u0085 \u009b end":     `C1 \xc2\x85 \xc2\x9b end`,
		"bad \xff\xfe \xe2\x82":    `bad \xff\xfe \xe2\x82`,
		`back\slash`:               `back\slash`,
		"\ufffd is valid":          "\ufffd is valid",
	} {
		if got := Printable(in); got != want {
			t.Errorf("Printable(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzPrintable: the result is UTF-8 without a control byte, unchanged when
// there was nothing to escape, and the same when escaped again.
func FuzzPrintable(f *testing.F) {
	f.Add("a\nb\x00\xff\u0085é")
	f.Fuzz(func(t *testing.T, s string) {
		p := Printable(s)
		if !utf8.ValidString(p) || strings.ContainsFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f }) {
			t.Fatalf("Printable(%q) = %q", s, p)
		}
		if Printable(p) != p {
			t.Fatalf("Printable(%q) changes again", p)
		}
		if !strings.Contains(p, `\x`) && p != s {
			t.Fatalf("Printable(%q) = %q with nothing escaped", s, p)
		}
	})
}

// TestSVGTextIsPrintable: titles, labels and legends with controls and
// bytes that are not UTF-8 make well-formed XML with the text escaped.
func TestSVGTextIsPrintable(t *testing.T) {
	bad := "x\x00\x1b[2J\x07\xff</text><script>alert(1)</script>\u009b"
	p := &Panel{Title: bad, XLabel: bad, YLabel: bad, XTics: []Tic{{Label: bad, At: 1}, {Label: "2", At: 2}},
		Lines: []Line{{Title: bad, Style: Lines, Rows: [][]float64{{1, 1}, {2, 3}}}}}
	var b bytes.Buffer
	if err := WriteSVG(&b, p, 600, 300); err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(&b)
	texts := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v\n%s", err, b.Bytes())
		}
		switch v := tok.(type) {
		case xml.StartElement:
			if v.Name.Local == "script" {
				t.Fatal("a label made an element")
			}
		case xml.CharData:
			if strings.Contains(string(v), `x\x00\x1b[2J\x07\xff</text><script>`) {
				texts++
			}
		}
	}
	if texts < 4 {
		t.Errorf("the label appears escaped %d times, want title, axes, tic and legend", texts)
	}
}
