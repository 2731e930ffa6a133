package schema

import "testing"

// TestSizeClass: a class holds its size, is at most 12.5% larger, and is
// its own class.
func TestSizeClass(t *testing.T) {
	for _, c := range []struct{ n, want int }{
		{1, 64}, {64, 64}, {65, 72}, {1000, 1024}, {1024, 1024}, {1025, 1152}, {1100, 1152}, {245_760 * 8, 245_760 * 8}, {245_760*8 + 1, 2_097_152},
	} {
		if got := sizeClass(c.n); got != c.want {
			t.Errorf("sizeClass(%d) = %d, want %d", c.n, got, c.want)
		}
	}
	for n := 1; n < 1<<20; n += 97 {
		c := sizeClass(n)
		if c < n || (n > 64 && float64(c) > 1.125*float64(n)) || sizeClass(c) != c {
			t.Fatalf("sizeClass(%d) = %d", n, c)
		}
	}
}

// TestBufferPoolReusesNearbySizes: a buffer freed is handed out again for
// a size of its class, cleared, and a buffer that is not one of the pool's
// is not kept.
func TestBufferPoolReusesNearbySizes(t *testing.T) {
	p := NewBufferPool().(*bufferPool)
	b := p.Allocate(1100)
	if len(b) != 1100 || cap(b) != 1152 {
		t.Fatalf("len %d cap %d", len(b), cap(b))
	}
	for i := range b[:cap(b)] {
		b[:cap(b)][i] = 0xff
	}
	p.Free(b)
	c := p.Allocate(1130)
	if &c[0] != &b[0] {
		t.Fatal("a buffer of the same class was not reused")
	}
	for i, v := range c[:cap(c)] {
		if v != 0 {
			t.Fatalf("byte %d of a reused buffer is %#x", i, v)
		}
	}
	p.Free(make([]byte, 1000))
	if p.kept != 0 {
		t.Fatalf("kept %d bytes of a foreign buffer", p.kept)
	}
}
