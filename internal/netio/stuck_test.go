//go:build linux

package netio

import (
	"bytes"
	"io"
	"testing"
	"time"
)

// TestKeptWriteWithFullSendBuffer: a small write kept while the socket's
// send buffer is full must not stop the next Read from reading. The peer
// here behaves as a PostgreSQL backend does when it answers a long
// pipeline: it writes its answers before reading on, blocking while the
// client does not read. Were the Read to wait for the socket to take the
// kept bytes (which needs the peer to read), client and peer would each
// wait for the other. pgconn cannot prevent that: it guards its Writes
// against this deadlock (a background reader after 15 ms), not its Reads.
func TestKeptWriteWithFullSendBuffer(t *testing.T) {
	for _, network := range transports {
		t.Run(network, func(t *testing.T) {
			c, srv := pair(t, network, WrapRaw)
			// Fill the send buffer (and the peer's receive buffer): a
			// write the deadline cuts short.
			c.SetWriteDeadline(time.Now().Add(200 * time.Millisecond))
			n, err := c.Write(make([]byte, 64<<20))
			if err == nil {
				t.Fatalf("wrote all %d bytes: the send buffer never filled", n)
			}
			c.SetWriteDeadline(time.Time{})
			if _, err := c.Write([]byte("k")); err != nil {
				t.Fatal(err)
			}
			if len(c.(*rawConn).kept) != 1 {
				t.Fatal("the small write was not kept")
			}
			answer := bytes.Repeat([]byte("a"), 32<<20)
			peerRead := make(chan int64, 1)
			go func() {
				srv.Write(answer) // blocks until the client reads
				n, _ := io.Copy(io.Discard, srv)
				peerRead <- n
			}()
			var got []byte
			within(t, 20*time.Second, "reading the peer's answer", func() {
				got = make([]byte, len(answer))
				_, err = io.ReadFull(c, got)
			})
			if err != nil || !bytes.Equal(got, answer) {
				t.Fatalf("read the answer: %v", err)
			}
			// The kept byte follows what was written before it.
			c.(*rawConn).Conn.(interface{ CloseWrite() error }).CloseWrite()
			within(t, 20*time.Second, "the peer's reads", func() {
				if m := <-peerRead; m != int64(n)+1 {
					t.Errorf("peer read %d bytes, want %d", m, n+1)
				}
			})
		})
	}
}

// TestCloseEndsStuckSend: the goroutine sending kept bytes that did not
// fit ends when the connection is closed, the peer never reading.
func TestCloseEndsStuckSend(t *testing.T) {
	for _, network := range transports {
		t.Run(network, func(t *testing.T) {
			c, _ := pair(t, network, WrapRaw)
			rc := c.(*rawConn)
			c.SetWriteDeadline(time.Now().Add(200 * time.Millisecond))
			if _, err := c.Write(make([]byte, 64<<20)); err == nil {
				t.Fatal("the send buffer never filled")
			}
			c.SetWriteDeadline(time.Time{})
			c.Write([]byte("k"))
			c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
			if _, err := c.Read(make([]byte, 16)); err == nil {
				t.Fatal("read something from a silent peer")
			}
			if rc.wmu.TryLock() {
				rc.wmu.Unlock()
				if len(rc.kept) > 0 {
					t.Fatal("the kept byte is neither sent nor being sent")
				}
			}
			c.Close()
			within(t, 5*time.Second, "the stuck send after Close", func() {
				rc.wmu.Lock()
				rc.wmu.Unlock()
			})
			if _, err := c.Write([]byte("x")); err == nil {
				t.Error("a Write after Close succeeded")
			}
		})
	}
}
