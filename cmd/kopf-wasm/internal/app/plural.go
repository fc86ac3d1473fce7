package app

import "fmt"

// count says n things: "1 handler", "3 handlers", "0 files" (noun is the
// singular; the plural adds an s).
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
