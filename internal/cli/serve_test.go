package cli

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestServeCommand: a bad --addr is bad input (exit 2, one line); serve on a
// free loopback port prints where it serves, with no token, and stops
// cleanly when interrupted.
func TestServeCommand(t *testing.T) {
	t.Parallel()
	for _, addr := range []string{"nonsense", "127.0.0.1:notaport"} {
		r := pgarena(t, nil, "serve", "--results", t.TempDir(), "--addr", addr)
		if r.code != 2 || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || !strings.Contains(r.stderr, "--addr") {
			t.Errorf("serve --addr %s: want exit 2 and one line naming --addr\n%s", addr, r)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	r := pgarenaCtx(t, ctx, nil, "serve", "--results", t.TempDir(), "--addr", "127.0.0.1:0")
	if r.code != 0 || !strings.Contains(r.stderr, "serving ") || strings.Contains(r.stderr, "token=") {
		t.Errorf("serve on loopback:\n%s", r)
	}
}

// serveLog is a bytes.Buffer safe to read while pgarena writes it.
type serveLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *serveLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *serveLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestServeAllInterfacesPrintsAUsableURL: serve --addr 0.0.0.0:0 prints a
// URL with an address of this host (not http://[::]:PORT), with its token,
// and the URL answers.
func TestServeAllInterfacesPrintsAUsableURL(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr serveLog
	done := make(chan int, 1)
	go func() {
		done <- Main{Stdout: io.Discard, Stderr: &stderr, Env: cleanEnv()}.Run(ctx, []string{"serve", "--results", t.TempDir(), "--addr", "0.0.0.0:0"})
	}()
	re := regexp.MustCompile(`serving .* at (http://\S+) `)
	var url string
	deadline := time.Now().Add(30 * time.Second)
	for url == "" && time.Now().Before(deadline) {
		if m := re.FindStringSubmatch(stderr.String()); m != nil {
			url = m[1]
		} else {
			time.Sleep(20 * time.Millisecond) // polls for the line, bounded by the deadline
		}
	}
	if url == "" {
		t.Fatalf("no URL printed within 30 s:\n%s", stderr.String())
	}
	if strings.Contains(url, "[::]") || strings.Contains(url, "0.0.0.0") || !strings.Contains(url, "?token=") {
		t.Errorf("serve --addr 0.0.0.0 printed %s: want an address of this host and the token", url)
	}
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET %s: %s", url, resp.Status)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("serve exited %d:\n%s", code, stderr.String())
	}
}
