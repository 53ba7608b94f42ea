// Package hpackdec decodes HPACK header blocks (RFC 7541) for gab's HTTP/2
// engine, giving the same fields and errors as x/net's hpack.Decoder without
// its per-response cost.
//
// x/net's decoder Huffman-decodes and allocates every literal string it
// meets. Servers such as nginx send every response field as a literal with
// incremental indexing (never referring to what they indexed before), so a
// response costs a Huffman decode and a string allocation per field, and each
// indexed field moves the whole dynamic table. This decoder keeps the
// dynamic table in a ring and looks each literal's encoded bytes up in a
// small per-connection table of the strings it has decoded before: a server
// that repeats its fields (the same Server, Content-Type, ETag, the Date of
// the current second) costs a map lookup per field and no allocation.
//
// The encoded forms are read exactly as x/net reads them, down to its
// leniencies (a table size update is accepted anywhere in a block while the
// table is empty; string and Huffman errors are found only in strings that
// are decoded). FuzzDecoderAsXNet holds the two decoders to the same fields,
// the same table and failure on the same blocks, on arbitrary input.
package hpackdec

import (
	"errors"

	"golang.org/x/net/http2/hpack"
)

// Errors: any of them is a COMPRESSION_ERROR of the connection.
var (
	ErrTruncated      = errors.New("hpack: truncated header block")
	ErrInvalidIndex   = errors.New("hpack: invalid table index")
	ErrVarintOverflow = errors.New("hpack: integer overflow")
	ErrSizeUpdate     = errors.New("hpack: dynamic table size update not at the beginning of a header block")
	ErrSizeTooLarge   = errors.New("hpack: dynamic table size update above the advertised maximum")
)

// Interning bounds: Strings remembers at most internMax decoded strings, each
// at most internLen bytes encoded; the table is emptied when it is full, so a
// server that never repeats a string costs what x/net costs and no more
// memory than this.
const (
	internMax = 64
	internLen = 96
)

type entry struct{ name, value string }

func (e entry) size() uint32 { return uint32(len(e.name) + len(e.value) + 32) }

// Decoder decodes the header blocks of one connection, in order. It is not
// safe for concurrent use.
type Decoder struct {
	ring    []entry // the dynamic table; ring[newest] is index 62
	newest  int
	n       int    // entries in the table
	size    uint32 // the table's size as RFC 7541 §4.1 counts it
	maxSize uint32 // the table's current maximum
	allowed uint32 // the most a size update may ask for
	first   bool   // the next representation is the first of its block

	strs Strings
}

// Strings interns the string literals a connection's header decoder decodes
// (HPACK's here, QPACK's in gab's HTTP/3 transport), by their encoded bytes:
// a server that repeats its fields costs no allocation. The zero value is
// ready to use; it is not safe for concurrent use.
type Strings struct {
	huff  map[string]string // Huffman-encoded bytes → decoded string
	plain map[string]string // raw literal bytes → the same as a string
}

// New returns a decoder whose table may hold maxTableSize bytes (what gab
// advertised in SETTINGS_HEADER_TABLE_SIZE, 4096 by default).
func New(maxTableSize uint32) *Decoder {
	return &Decoder{
		ring:    make([]entry, maxTableSize/32+1),
		maxSize: maxTableSize,
		allowed: maxTableSize,
		first:   true,
	}
}

// Decode decodes one complete header block, calling emit for each field in
// order when emit is not nil. With a nil emit the block still updates the
// table, but the strings of literals that are not indexed are skipped, not
// decoded (as x/net does with emitting disabled). After an error the
// decoder's table is undefined: the connection must end.
func (d *Decoder) Decode(block []byte, emit func(hpack.HeaderField)) error {
	d.first = true
	p := block
	for len(p) > 0 {
		var err error
		if p, err = d.field(p, emit); err != nil {
			return err
		}
		d.first = false
	}
	d.first = true
	return nil
}

// field decodes the representation at the start of p and returns the rest.
func (d *Decoder) field(p []byte, emit func(hpack.HeaderField)) ([]byte, error) {
	b := p[0]
	switch {
	case b&0x80 != 0: // indexed field (§6.1)
		i, rest, err := varint(7, p)
		if err != nil {
			return nil, err
		}
		e, ok := d.at(i)
		if !ok {
			return nil, ErrInvalidIndex
		}
		if emit != nil {
			emit(hpack.HeaderField{Name: e.name, Value: e.value})
		}
		return rest, nil
	case b&0xc0 == 0x40: // literal with incremental indexing (§6.2.1)
		return d.literal(p, 6, true, emit)
	case b&0xe0 == 0x00: // literal without indexing, or never indexed (§6.2.2, §6.2.3)
		return d.literal(p, 4, false, emit)
	default: // 001xxxxx: dynamic table size update (§6.3)
		if !d.first && d.size > 0 {
			return nil, ErrSizeUpdate
		}
		v, rest, err := varint(5, p)
		if err != nil {
			return nil, err
		}
		if v > uint64(d.allowed) {
			return nil, ErrSizeTooLarge
		}
		d.maxSize = uint32(v)
		d.evictTo(d.maxSize)
		return rest, nil
	}
}

func (d *Decoder) literal(p []byte, prefix uint8, indexed bool, emit func(hpack.HeaderField)) ([]byte, error) {
	nameIdx, p, err := varint(prefix, p)
	if err != nil {
		return nil, err
	}
	var e entry
	var rawName, rawValue []byte
	var huffName, huffValue bool
	if nameIdx > 0 {
		ie, ok := d.at(nameIdx)
		if !ok {
			return nil, ErrInvalidIndex
		}
		e.name = ie.name
	} else if rawName, huffName, p, err = str(p); err != nil {
		return nil, err
	}
	if rawValue, huffValue, p, err = str(p); err != nil {
		return nil, err
	}
	if emit != nil || indexed {
		if nameIdx == 0 {
			if e.name, err = d.strs.Decode(rawName, huffName); err != nil {
				return nil, err
			}
		}
		if e.value, err = d.strs.Decode(rawValue, huffValue); err != nil {
			return nil, err
		}
	}
	if indexed {
		d.add(e)
	}
	if emit != nil {
		emit(hpack.HeaderField{Name: e.name, Value: e.value})
	}
	return p, nil
}

// at returns the entry at index i (§2.3.3): 1–61 static, 62 on the dynamic
// table from its newest entry.
func (d *Decoder) at(i uint64) (entry, bool) {
	switch {
	case i == 0:
		return entry{}, false
	case i <= uint64(len(staticTable)):
		return staticTable[i-1], true
	case i-uint64(len(staticTable)) > uint64(d.n):
		return entry{}, false
	}
	k := d.newest - int(i-uint64(len(staticTable))-1)
	if k < 0 {
		k += len(d.ring)
	}
	return d.ring[k], true
}

// add inserts e as the newest entry, evicting the oldest ones to make room;
// an entry larger than the table's maximum empties the table (§4.4).
func (d *Decoder) add(e entry) {
	s := e.size()
	if s > d.maxSize {
		d.evictTo(0)
		return
	}
	d.evictTo(d.maxSize - s)
	d.newest++
	if d.newest == len(d.ring) {
		d.newest = 0
	}
	d.ring[d.newest] = e
	d.n++
	d.size += s
}

// evictTo drops the oldest entries until the table's size is at most max.
func (d *Decoder) evictTo(max uint32) {
	for d.size > max && d.n > 0 {
		k := d.newest - (d.n - 1)
		if k < 0 {
			k += len(d.ring)
		}
		d.size -= d.ring[k].size()
		d.ring[k] = entry{}
		d.n--
	}
}

// Decode returns the string that raw encodes (Huffman-coded if huff), from
// the strings interned when it has decoded the same bytes before.
func (st *Strings) Decode(raw []byte, huff bool) (string, error) {
	m := &st.plain
	if huff {
		m = &st.huff
	}
	if s, ok := (*m)[string(raw)]; ok {
		return s, nil
	}
	var s string
	if huff {
		var err error
		if s, err = hpack.HuffmanDecodeToString(raw); err != nil {
			return "", err
		}
	} else {
		s = string(raw)
	}
	if len(raw) <= internLen {
		if *m == nil {
			*m = make(map[string]string)
		} else if len(*m) >= internMax {
			clear(*m)
		}
		(*m)[string(raw)] = s
	}
	return s, nil
}

// varint reads an integer with an n-bit prefix (§5.1), as x/net reads it:
// more than 63 bits of continuation is an overflow.
func varint(n uint8, p []byte) (uint64, []byte, error) {
	if len(p) == 0 {
		return 0, nil, ErrTruncated
	}
	i := uint64(p[0]) & (1<<n - 1)
	if i < 1<<n-1 {
		return i, p[1:], nil
	}
	p = p[1:]
	var m uint
	for len(p) > 0 {
		b := p[0]
		p = p[1:]
		i += uint64(b&0x7f) << m
		if b&0x80 == 0 {
			return i, p, nil
		}
		if m += 7; m >= 63 {
			return 0, nil, ErrVarintOverflow
		}
	}
	return 0, nil, ErrTruncated
}

// str reads a string literal (§5.2): its encoded bytes and whether they are
// Huffman-coded.
func str(p []byte) (raw []byte, huff bool, rest []byte, err error) {
	if len(p) == 0 {
		return nil, false, nil, ErrTruncated
	}
	huff = p[0]&0x80 != 0
	l, p, err := varint(7, p)
	if err != nil {
		return nil, false, nil, err
	}
	if uint64(len(p)) < l {
		return nil, false, nil, ErrTruncated
	}
	return p[:l], huff, p[l:], nil
}
