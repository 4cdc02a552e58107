package experiment

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// writeVersion prints what tokendist version prints, from build information bi (ok
// false: none): the version Version reports (which every run's key includes), then the
// module version and the VCS revision and time on their own lines, and the Go version.
func writeVersion(w io.Writer, bi *debug.BuildInfo, ok bool) {
	fmt.Fprintf(w, "tokendist %s\n", versionOf(bi, ok))
	mod, rev, when, dirty := "(unknown)", "", "", ""
	if ok && bi != nil {
		mod = orDevel(bi.Main.Version)
		if bi.Main.Path != modulePath {
			mod = "(not the main module)"
			for _, d := range bi.Deps {
				if d != nil && d.Path == modulePath {
					mod = orDevel(d.Version)
				}
			}
		}
		var modified string
		rev, when, modified = vcsSettings(bi)
		if modified == "true" {
			dirty = " (modified)"
		}
	}
	fmt.Fprintf(w, "module:   %s %s\n", modulePath, mod)
	if rev == "" {
		fmt.Fprintln(w, "revision: not recorded (built outside a checkout, or with -buildvcs=false)")
	} else {
		fmt.Fprintf(w, "revision: %s%s %s\n", rev, dirty, when)
	}
	fmt.Fprintf(w, "go:       %s\n", runtime.Version())
}

// writeCode prints the code identity that run keys include (CodeIdentity), or why it
// cannot be computed.
func writeCode(w io.Writer) {
	id, err := CodeIdentity("")
	if err != nil {
		fmt.Fprintf(w, "code:     %v\n", err)
		return
	}
	fmt.Fprintf(w, "code:     %s\n", id)
}

func (c *command) version(args []string) int {
	fs := c.flags("version", "Usage: tokendist version\n\nPrints the tokendist module version and VCS revision, the Go version, and the code identity every run's key includes (the main module, its revision, and the SHA-256 of the executable where those cannot tell two builds apart).\n")
	pos, code, ok := c.parse(fs, args)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		fmt.Fprintln(c.stderr, "tokendist: version takes no argument")
		return ExitUsage
	}
	bi, ok := debug.ReadBuildInfo()
	writeVersion(c.stdout, bi, ok)
	writeCode(c.stdout)
	return ExitOK
}
