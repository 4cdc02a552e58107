package plot_test

import (
	"fmt"

	"github.com/tokendist/tokendist/plot"
)

// FormatOf chooses the image format from a file name; LinesAs and Facets write it.
func ExampleFormatOf() {
	for _, name := range []string{"disc.svg", "disc.PNG", "paper/fig1.pdf", "disc.gif"} {
		f, err := plot.FormatOf(name)
		fmt.Printf("%s: %q %v\n", name, f, err)
	}
	// Output:
	// disc.svg: "svg" <nil>
	// disc.PNG: "png" <nil>
	// paper/fig1.pdf: "pdf" <nil>
	// disc.gif: "" tokendist: bad parameter: plot file "disc.gif": unknown image format "gif" (the extension selects it: .svg, .png or .pdf)
}
