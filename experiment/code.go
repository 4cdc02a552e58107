package experiment

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/tokendist/tokendist/internal/errs"
	"github.com/tokendist/tokendist/internal/files"
)

// UnknownCode is the code identity of the runs a database held before run keys covered
// the program's code (schema 1): reports never pool them with runs of a known code.
const UnknownCode = "unknown (before code keys)"

// maxCodeLabel bounds the length of a code label (File.Code, sweep --code).
const maxCodeLabel = 200

// codeInfo identifies the code of this program: the main module, the tokendist module
// (when it is a dependency), the digest of the executable when the build information
// cannot tell two builds apart, and the user's label.
type codeInfo struct {
	mainPath, mainVersion string
	revision              string // vcs.revision of the main module ("" when not recorded)
	modified              bool   // vcs.modified
	tokendist             string // the tokendist dependency ("" when tokendist is the main module)
	digest                string // hex SHA-256 of the executable ("" when not needed)
	label                 string
}

// identity returns the code identity: "main=PATH@VERSION" with "+rev:REVISION",
// "+modified" and "+sha256:DIGEST" where they apply, " tokendist=VERSION" when tokendist
// is a dependency and " label=LABEL" for a label. With short, the revision and the digest
// are cut to 12 hexadecimal digits (the readable form, stored in the code column); the
// key hashes the full form.
func (c codeInfo) identity(short bool) string {
	cut := func(s string) string {
		if short {
			return s[:min(len(s), 12)]
		}
		return s
	}
	var b strings.Builder
	b.WriteString("main=" + c.mainPath + "@" + c.mainVersion)
	if c.revision != "" {
		b.WriteString("+rev:" + cut(c.revision))
	}
	if c.modified {
		b.WriteString("+modified")
	}
	if c.digest != "" {
		b.WriteString("+sha256:" + cut(c.digest))
	}
	if c.tokendist != "" {
		b.WriteString(" tokendist=" + c.tokendist)
	}
	if c.label != "" {
		b.WriteString(" label=" + c.label)
	}
	return b.String()
}

// withLabel returns c with the user's label.
func (c codeInfo) withLabel(label string) codeInfo {
	c.label = label
	return c
}

// codeOf returns the code identity described by build information bi (ok false: none),
// with exe supplying the executable's digest where the build information cannot tell two
// builds apart: no build information, a main module of version "(devel)" without a VCS
// revision, an uncommitted tree (vcs.modified=true), a dependency without a version
// ("(devel)": a workspace module) or replaced by a directory (a replace directive with a
// path).
func codeOf(bi *debug.BuildInfo, ok bool, exe func() (string, error)) (codeInfo, error) {
	var c codeInfo
	need := false
	if !ok || bi == nil {
		c.mainPath, c.mainVersion = "(unknown)", "(unknown)"
		need = true
	} else {
		c.mainPath, c.mainVersion = orDevel(bi.Main.Path), orDevel(bi.Main.Version)
		rev, _, modified := vcsSettings(bi)
		c.revision, c.modified = rev, modified == "true"
		// A main module without a revision is named by its version only when that is
		// a module version (go install PATH@VERSION, checked against go.sum), not
		// "(devel)".
		need = (rev == "" && c.mainVersion == "(devel)") || c.modified
		if bi.Main.Path != modulePath {
			c.tokendist = compactVersion(versionOf(bi, ok))
		}
		for _, d := range bi.Deps {
			if d == nil {
				continue
			}
			if d.Version == "" || d.Version == "(devel)" || (d.Replace != nil && isDirReplace(d.Replace)) {
				need = true
			}
		}
	}
	if need {
		d, err := exe()
		if err != nil {
			return codeInfo{}, err
		}
		c.digest = d
	}
	return c, nil
}

// isDirReplace reports whether a replace directive points at a directory (whose
// contents no version names) rather than at a module version.
func isDirReplace(r *debug.Module) bool {
	return r.Version == "" || r.Version == "(devel)" || strings.HasPrefix(r.Path, ".") || filepath.IsAbs(r.Path)
}

// compactVersion writes a dependency's version without spaces ("v1.0.0=>../tokendist").
func compactVersion(v string) string {
	return strings.ReplaceAll(strings.ReplaceAll(v, " => ", "=>"), " ", "@")
}

// executableDigest returns the hex SHA-256 of the running executable (os.Executable).
// Go builds are reproducible, so an unchanged rebuild has the same digest.
func executableDigest() (string, error) {
	path, err := os.Executable()
	if err != nil {
		return "", errs.Wrapf(err, "code identity: locate the executable")
	}
	fh, err := os.Open(path)
	if err != nil {
		return "", errs.Wrapf(err, "code identity: read the executable %s", files.Name(path))
	}
	defer fh.Close()
	h := sha256.New()
	if _, err := io.Copy(h, fh); err != nil {
		return "", errs.Wrapf(err, "code identity: read the executable %s", files.Name(path))
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// thisCode is the code identity of this program, computed once (the digest of the
// executable, when needed, is read at the first call).
var thisCode = sync.OnceValues(func() (codeInfo, error) {
	bi, ok := debug.ReadBuildInfo()
	return codeOf(bi, ok, executableDigest)
})

// CodeIdentity returns the readable identity of the code of this program with the
// user's label (File.Code, sweep --code; "" for none), as the runs table's code column
// stores it and reports show it: "main=PATH@VERSION" followed by "+rev:REVISION" (12
// digits), "+modified" and "+sha256:DIGEST" (12 digits of the SHA-256 of the running
// executable) where they apply, then " tokendist=VERSION" when tokendist is a dependency
// and " label=LABEL", for example
// "main=example.com/mybal@(devel)+sha256:1a2b3c4d5e6f tokendist=v1.0.0".
//
// The digest is part of the identity wherever the build information cannot tell two
// builds apart: a main module of version "(devel)" without a VCS revision (go test,
// -buildvcs=false, a build outside a checkout; go install PATH@VERSION is named by its
// version), an uncommitted tree (vcs.modified=true), a dependency without a version (a workspace
// module) or replaced by a directory. Run keys hash the same identity with the full
// revision and digest. The first call reads the build information and, when the digest
// is needed, the executable (O(size of the executable)); later calls cost O(1). It fails
// when the executable cannot be read, or for a label with control characters or longer
// than 200 bytes.
func CodeIdentity(label string) (string, error) {
	c, err := codeFor(label)
	if err != nil {
		return "", err
	}
	return c.identity(true), nil
}

// codeFor returns the code identity of this program with label.
func codeFor(label string) (codeInfo, error) {
	if err := checkCodeLabel(label); err != nil {
		return codeInfo{}, err
	}
	c, err := thisCode()
	if err != nil {
		return codeInfo{}, err
	}
	return c.withLabel(label), nil
}

// checkCodeLabel refuses a code label with control characters or longer than
// maxCodeLabel bytes.
func checkCodeLabel(label string) error {
	if len(label) > maxCodeLabel {
		return errs.BadParam("code label %s is longer than %d bytes", errs.Quote([]byte(label)), maxCodeLabel)
	}
	if strings.IndexFunc(label, unicode.IsControl) >= 0 || !utf8.ValidString(label) {
		return errs.BadParam("code label %s has a control character or is not UTF-8", errs.Quote([]byte(label)))
	}
	return nil
}
