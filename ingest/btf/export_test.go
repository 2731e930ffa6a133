package btf

// Chunked returns the BTF ingester that reads a source of known size in
// chunks of size bytes (size < 0: line by line, as a stream).
func Chunked(size int) Ingester { return Ingester{chunk: size} }
