// Command apigen writes or checks the golden files of tokendist's exported API.
//
//	go run ./internal/apigen/cmd -w   # rewrite api/next.txt (and api/v1.txt before v1.0.0)
//
// api/v1.txt is the surface as of v1.0.0; after the release it is frozen and every addition
// is listed in api/next.txt. The test TestAPISurface in the root package fails when the
// surface and the files disagree.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/tokendist/tokendist/internal/apigen"
)

func main() {
	write := flag.Bool("w", false, "rewrite the golden files to match the source")
	dir := flag.String("dir", ".", "the repository root (the package's folder)")
	flag.Parse()
	if err := apigen.Update(*dir, *write, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "apigen:", err)
		os.Exit(1)
	}
}
