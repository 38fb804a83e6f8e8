package store

import (
	"bufio"
	"bytes"
	"os"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// HostInfo describes the machine pgarena ran on (the client side).
type HostInfo struct {
	Hostname    string `json:"hostname"`
	Cores       int    `json:"cores"`
	MemoryBytes int64  `json:"memory_bytes"`
	Kernel      string `json:"kernel"`            // uname sysname and release, e.g. "Linux 6.8.0-45-generic"
	OS          string `json:"os"`                // /etc/os-release PRETTY_NAME, else GOOS
	Arch        string `json:"arch"`              // GOARCH
	GoVersion   string `json:"go_version"`        // runtime.Version of the pgarena binary
	Machine     string `json:"machine,omitempty"` // uname machine
}

// CollectHostInfo gathers HostInfo from the os and runtime packages,
// /proc/meminfo, /etc/os-release and uname. Missing sources leave fields
// empty; it never fails.
func CollectHostInfo() HostInfo {
	h := HostInfo{
		Cores:     runtime.NumCPU(),
		OS:        runtime.GOOS,
		Arch:      runtime.GOARCH,
		GoVersion: runtime.Version(),
	}
	h.Hostname, _ = os.Hostname()
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		h.MemoryBytes = parseMemTotal(b)
	}
	if b, err := os.ReadFile("/etc/os-release"); err == nil {
		if name := parseOSRelease(b); name != "" {
			h.OS = name
		}
	}
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		h.Kernel = strings.TrimSpace(unix.ByteSliceToString(u.Sysname[:]) + " " + unix.ByteSliceToString(u.Release[:]))
		h.Machine = unix.ByteSliceToString(u.Machine[:])
	}
	return h
}

// parseMemTotal returns MemTotal from /proc/meminfo contents, in bytes.
func parseMemTotal(b []byte) int64 {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "MemTotal:" {
			n, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				return 0
			}
			if len(f) >= 3 && strings.EqualFold(f[2], "kB") {
				n *= 1024
			}
			return n
		}
	}
	return 0
}

// parseOSRelease returns PRETTY_NAME (else NAME) from os-release contents.
func parseOSRelease(b []byte) string {
	var pretty, name string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), "=")
		if !ok {
			continue
		}
		if uq, err := strconv.Unquote(v); err == nil {
			v = uq
		} else {
			v = strings.Trim(v, `"'`)
		}
		switch k {
		case "PRETTY_NAME":
			pretty = v
		case "NAME":
			name = v
		}
	}
	if pretty != "" {
		return pretty
	}
	return name
}
