package tokendist

import (
	"fmt"
	"io"
)

// maxRecordBytes bounds one record (a line, or a quoted field over several lines) of the
// CSV readers ReadTraceCSV and NewTraceArrivals: a reader that never ends a record (an
// endless stream without a newline, an unclosed quote) fails there instead of making
// the CSV parser buffer it whole.
const maxRecordBytes = 1 << 20

// recordLimitReader passes its reader's bytes through and fails once a record exceeds
// maxRecordBytes. A record ends at a newline outside double quotes (the quote parity
// counts CSV's escaped "" twice, so it stays right).
type recordLimitReader struct {
	r       io.Reader
	run     int // bytes since the last record end
	inQuote bool
	line    int // records ended, for the error
}

func (l *recordLimitReader) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	for _, c := range p[:n] {
		switch c {
		case '"':
			l.inQuote = !l.inQuote
		case '\n':
			if !l.inQuote {
				l.run = 0
				l.line++
				continue
			}
		}
		if l.run++; l.run > maxRecordBytes {
			return 0, fmt.Errorf("%w: record at line %d is longer than %d bytes", ErrBadParameter, l.line+1, maxRecordBytes)
		}
	}
	return n, err
}
