package samples

import (
	"sync"
	"sync/atomic"
)

// blockShift sets the size of the blocks a growing store adds as it fills:
// 1<<16 entries, 1 MiB of Samples.
const blockShift = 16

const blockLen = 1 << blockShift

// Blocks is an array of up to limit entries written by index from many
// goroutines at once (each index by one of them), whose memory follows the
// highest index written: its first part is allocated when it is made, the
// rest in blocks of blockLen entries when a write first reaches them. A
// block is allocated once per blockLen writes (a 1 MiB allocation for
// 65,536 Samples), so a write allocates nothing on average; blocks never
// move while writes go on. All gathers the entries into one slice once the
// writes are over.
type Blocks[T any] struct {
	first []T
	limit int                   // entries 0…limit−1
	mu    sync.Mutex            // serialises the allocation of blocks
	tab   atomic.Pointer[[][]T] // the blocks past first, by number; a new table replaces it when a block is added
}

// NewBlocks returns an array of limit entries whose first size ones are
// allocated now (size is clamped to 0…limit).
func NewBlocks[T any](size, limit int) Blocks[T] {
	limit = max(limit, 0)
	return Blocks[T]{first: make([]T, min(max(size, 0), limit)), limit: limit}
}

// Set stores v at index i (0 ≤ i < limit). Safe for concurrent use with
// distinct i.
func (b *Blocks[T]) Set(i int, v T) {
	if i < len(b.first) {
		b.first[i] = v
		return
	}
	j := i - len(b.first)
	k := j >> blockShift
	if t := b.tab.Load(); t != nil && k < len(*t) {
		if blk := (*t)[k]; blk != nil {
			blk[j&(blockLen-1)] = v
			return
		}
	}
	b.grow(k)[j&(blockLen-1)] = v
}

// grow returns block k, allocating it if it is not there yet: the block
// (blockLen entries, fewer for the last one below limit) and a new table
// holding it, published atomically. Writes are rare here: one per block.
//
//go:noinline
func (b *Blocks[T]) grow(k int) []T {
	b.mu.Lock()
	defer b.mu.Unlock()
	var old [][]T
	if t := b.tab.Load(); t != nil {
		old = *t
		if k < len(old) && old[k] != nil {
			return old[k]
		}
	}
	tab := make([][]T, max(len(old), k+1))
	copy(tab, old)
	start := len(b.first) + k<<blockShift
	tab[k] = make([]T, min(blockLen, b.limit-start))
	b.tab.Store(&tab)
	return tab[k]
}

// Allocated is the number of entries allocated so far.
func (b *Blocks[T]) Allocated() int {
	n := len(b.first)
	if t := b.tab.Load(); t != nil {
		for _, blk := range *t {
			n += len(blk)
		}
	}
	return n
}

// All returns entries 0…n−1 (n ≤ limit) as one slice. With no block in use
// that is the first part itself; otherwise the entries are gathered into a
// new slice of n, which becomes the first part, and the blocks are let go:
// a transient second copy of the entries. It must not run concurrently with
// Set.
func (b *Blocks[T]) All(n int) []T {
	n = min(max(n, 0), b.limit)
	if n <= len(b.first) {
		return b.first[:n]
	}
	whole := make([]T, n)
	copy(whole, b.first)
	if t := b.tab.Load(); t != nil {
		for k, blk := range *t {
			if start := len(b.first) + k<<blockShift; start < n {
				copy(whole[start:], blk) // a block no write reached is nil: its entries stay zero
			}
		}
	}
	b.first = whole
	b.tab.Store(nil)
	return whole
}

// Limit is the number of entries the array may hold.
func (b *Blocks[T]) Limit() int { return b.limit }
