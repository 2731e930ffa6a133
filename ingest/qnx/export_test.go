package qnx

// What the tests of package qnx_test use of this package's own tests.
var (
	ParseTraceprinter = parseTraceprinter
	WriteKev          = writeKev
)
