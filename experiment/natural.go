package experiment

import (
	"regexp"
	"sort"
	"strconv"
)

// numberToken matches a decimal number inside a label ("n = 1024", "p = 0.25",
// "delta = -1e-06").
var numberToken = regexp.MustCompile(`[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?`)

// naturalLess orders labels as a reader expects: the numbers inside them by value, the
// text between them as text, so "n = 256" comes before "n = 1024" and "p = 0.5" after
// "p = 0.25". Labels equal in that order fall back on byte order, so the order is total.
// It costs O(len(a) + len(b)).
func naturalLess(a, b string) bool {
	if c := naturalCompare(a, b); c != 0 {
		return c < 0
	}
	return a < b
}

// naturalCompare compares a and b token by token: text by bytes, numbers by value, a
// number before text.
func naturalCompare(a, b string) int {
	ta, tb := naturalTokens(a), naturalTokens(b)
	for i := 0; i < len(ta) && i < len(tb); i++ {
		x, y := ta[i], tb[i]
		switch {
		case x.num && y.num:
			if x.v != y.v {
				if x.v < y.v {
					return -1
				}
				return 1
			}
		case x.num != y.num:
			if x.num {
				return -1
			}
			return 1
		case x.s != y.s:
			if x.s < y.s {
				return -1
			}
			return 1
		}
	}
	return len(ta) - len(tb)
}

// naturalToken is a run of text or a number of a label.
type naturalToken struct {
	s   string
	v   float64
	num bool
}

// naturalTokens splits s into text and numbers.
func naturalTokens(s string) []naturalToken {
	var out []naturalToken
	at := 0
	for _, m := range numberToken.FindAllStringIndex(s, -1) {
		if c := s[m[0]]; (c == '-' || c == '+') && m[0] > 0 && isWordByte(s[m[0]-1]) {
			m[0]++ // a hyphen inside a name ("threshold-2"), not a sign
		}
		v, err := strconv.ParseFloat(s[m[0]:m[1]], 64)
		if err != nil { // not a number after all (out of range): keep it as text
			continue
		}
		if m[0] > at {
			out = append(out, naturalToken{s: s[at:m[0]]})
		}
		out = append(out, naturalToken{v: v, num: true})
		at = m[1]
	}
	if at < len(s) {
		out = append(out, naturalToken{s: s[at:]})
	}
	return out
}

// isWordByte reports whether c is a letter, a digit, '_' or ')': after one, a '-' is
// a hyphen or an operator, not a sign.
func isWordByte(c byte) bool {
	return c == '_' || c == ')' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// sortNatural sorts labels in natural order (naturalLess). O(k log k) comparisons.
func sortNatural(labels []string) {
	sort.SliceStable(labels, func(i, j int) bool { return naturalLess(labels[i], labels[j]) })
}
