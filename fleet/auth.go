package fleet

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"io"
	"net/http"
	"os"
	"runtime"
	"strings"

	"github.com/tokendist/tokendist/internal/errs"
	"github.com/tokendist/tokendist/internal/files"
)

// MACSize is the length in bytes of the tag a node appends to every frame it sends
// when authentication is on (Config.KeyFile): HMAC-SHA256 of the whole frame under
// the fleet's frame key, truncated to its first 16 bytes (docs/fleet.md,
// "Authentication").
const MACSize = 16

// MinKeyBytes is the least number of secret bytes a key file must hold (after its
// trailing white space is removed): 32 bytes, HMAC-SHA256's block of security.
const MinKeyBytes = 32

// maxKeyBytes bounds a key file.
const maxKeyBytes = 4 << 10

// The labels that derive the frame key and the HTTP token from the key file's
// secret, so that the token an operator hands to a monitoring system cannot forge
// frames.
const (
	frameKeyLabel  = "tokendist fleet frame key v1"
	httpTokenLabel = "tokendist fleet http token v1"
)

// fleetKeys are the keys a node derives from its key file: frame signs and checks
// frames, token is the HTTP bearer token. Both are empty when authentication is off
// (Config.Insecure).
type fleetKeys struct {
	frame []byte
	token string
}

// readKeys reads cfg's key file and derives the node's keys; with Insecure it returns
// the empty keys. O(size of the key file).
func readKeys(cfg *Config) (fleetKeys, error) {
	if cfg.Insecure {
		return fleetKeys{}, nil
	}
	secret, err := readKeyFile(cfg.KeyFile)
	if err != nil {
		return fleetKeys{}, err
	}
	return deriveKeys(secret), nil
}

// deriveKeys derives the frame key and the HTTP token from secret: HMAC-SHA256(secret,
// label) for two distinct labels.
func deriveKeys(secret []byte) fleetKeys {
	derive := func(label string) []byte {
		m := hmac.New(sha256.New, secret)
		m.Write([]byte(label))
		return m.Sum(nil)
	}
	return fleetKeys{frame: derive(frameKeyLabel), token: hex.EncodeToString(derive(httpTokenLabel))}
}

// readKeyFile reads a key file: its bytes without trailing white space are the
// secret, at least MinKeyBytes of them; the file must be a regular file of at most 4
// KiB that neither its group nor others may read or write (not checked on Windows).
func readKeyFile(path string) ([]byte, error) {
	if path == "" {
		return nil, errs.BadParam("key_file is empty")
	}
	f, err := files.Open(path, "key_file", maxKeyBytes)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if runtime.GOOS != "windows" {
		if fi, err := os.Stat(path); err == nil && fi.Mode().Perm()&0o077 != 0 {
			return nil, errs.BadParam("key_file %s has mode %v: others than its owner may read or change the fleet's key; chmod 600 it", files.Name(path), fi.Mode().Perm())
		}
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, errs.Wrapf(err, "key_file %s", files.Name(path))
	}
	secret := bytes.TrimRight(b, " \t\r\n")
	if len(secret) < MinKeyBytes {
		return nil, errs.BadParam("key_file %s holds %d bytes of key; want at least %d (for example: head -c 32 /dev/urandom | base64 > %s)",
			files.Name(path), len(secret), MinKeyBytes, files.Name(path))
	}
	return secret, nil
}

// HTTPToken returns the bearer token of the node's HTTP endpoint, derived from
// c.KeyFile (docs/fleet.md, "Authentication"): clients send it as the header
// "Authorization: Bearer TOKEN". With c.Insecure it returns "" (the endpoint takes
// requests without a token). An error names the key file's problem. O(size of the
// key file).
func (c *Config) HTTPToken() (string, error) {
	k, err := readKeys(c)
	if err != nil {
		return "", err
	}
	return k.token, nil
}

// appendMAC appends to frame the MAC of all its bytes under key (MACSize bytes).
// O(len(frame)).
func appendMAC(frame, key []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write(frame)
	var sum [sha256.Size]byte
	return append(frame, m.Sum(sum[:0])[:MACSize]...)
}

// checkMAC returns the frame without its MAC, and whether the MAC is there and right
// (hmac.Equal: constant time). O(len(b)).
func checkMAC(b, key []byte) ([]byte, bool) {
	if len(b) < MACSize {
		return nil, false
	}
	body, tag := b[:len(b)-MACSize], b[len(b)-MACSize:]
	m := hmac.New(sha256.New, key)
	m.Write(body)
	var sum [sha256.Size]byte
	return body, hmac.Equal(m.Sum(sum[:0])[:MACSize], tag)
}

// requireToken wraps h: a request without the header "Authorization: Bearer token"
// (compared in constant time) answers 401 and does not reach h.
func requireToken(token string, h http.Handler) http.Handler {
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := r.Header.Get("Authorization")
		if strings.HasPrefix(got, "bearer ") { // the scheme is case-insensitive (RFC 9110)
			got = "Bearer " + got[len("bearer "):]
		}
		if subtle.ConstantTimeCompare([]byte(got), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="tokendist"`)
			msg := "tokendist: missing or wrong bearer token: send the header \"Authorization: Bearer TOKEN\" (tokendist-node -config FILE -print-token prints the node's token)"
			if got == "" {
				msg = "tokendist: no Authorization header: send \"Authorization: Bearer TOKEN\" (tokendist-node -config FILE -print-token prints the node's token)"
			}
			http.Error(w, msg, http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}
