package chart

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"
	"testing"
)

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
