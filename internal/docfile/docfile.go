// Package docfile reads the JSON documents gab merge, compare and plot are
// given, within the bounds of what gab decodes.
package docfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"gab/internal/printable"
	"gab/report"
)

// Read reads a document gab merge, compare or plot is given:
// at most report.MaxDocumentBytes, or with sweeps (compare, plot) at most
// report.MaxSweepBytes for a sweep document (one whose top-level "schema"
// says so among its first keys, as gab writes it, within its first 64 KiB).
// A larger one is refused before it is decoded (a regular file before it is
// read past those 64 KiB), with the bound in the error. A pipe is read as it
// comes, once.
func Read(name string, sweeps bool) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	what, limit := "run document", int64(report.MaxDocumentBytes)
	var head []byte
	if sweeps {
		what = "document other than a sweep's"
		if head, err = io.ReadAll(io.LimitReader(f, 64<<10)); err != nil {
			return nil, err
		}
		if topLevelSchema(head) == "gab-sweep" {
			what, limit = "sweep document", report.MaxSweepBytes
		}
	}
	tooLarge := report.DocumentTooLarge(printable.String(name), what, limit)
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > limit {
		return nil, tooLarge
	}
	rest, err := io.ReadAll(io.LimitReader(f, limit+1-int64(len(head))))
	if err != nil {
		return nil, err
	}
	if raw := append(head, rest...); int64(len(raw)) <= limit {
		return raw, nil
	}
	return nil, tooLarge
}

// topLevelSchema is the "schema" of the JSON object that raw starts with,
// if it is a string among the object's first 8 keys ("" otherwise).
func topLevelSchema(raw []byte) string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return ""
	}
	for range 8 {
		key, err := dec.Token()
		if err != nil {
			return ""
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return ""
		}
		if key == "schema" {
			var s string
			if json.Unmarshal(v, &s) != nil {
				return ""
			}
			return s
		}
	}
	return ""
}

// ReadSchema reads a document gab compare is given, once (a pipe holds it
// only once), with sweeps' bound (Read), and its top-level "schema".
// Errors start with the file's name.
func ReadSchema(name string) (raw []byte, schema string, err error) {
	raw, err = Read(name, true)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", fmt.Errorf("%s: no such file", printable.String(name))
	}
	if err != nil {
		return nil, "", err
	}
	var head struct {
		Schema string `json:"schema"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return nil, "", report.JSONError(printable.String(name), "gab JSON document", err)
	}
	return raw, head.Schema, nil
}
