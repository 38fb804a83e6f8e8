//go:build linux

// Command floor is the least a Go client of many connections costs per
// transaction: pgbench's select-only transaction (one simple-protocol query,
// a random aid) on -c connections, -t times each, with nothing else (no
// timing, no histogram, no script). It answers whether a client cost is the
// Go runtime's way of waiting or pgarena's own, and which way of waiting:
//
//	net        a goroutine per connection through net.Conn: write, then read
//	readfirst  a goroutine per connection, raw calls: the request sent from
//	           the netpoller's read callback, then a read at once
//	waitfirst  the same, but the callback parks after sending, without a read
//	loop       one epoll loop per -j thread over its share of the connections
//
// It prints tps and the process's CPU per transaction after connecting.
// bench/floor.sh runs it beside pgbench and pgarena; docs/benchmarks.md, "Many clients".
package main

import (
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"net"
	"os"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/jackc/pgx/v5/pgconn"
)

type client struct {
	conn net.Conn
	file *os.File // loop: the socket's duplicate, kept open
	fd   int
	left int // transactions to run
	in   []byte
	n    int // bytes of in read
	out  []byte
	rng  *rand.PCG
}

// query writes the next Query message into c.out.
func (c *client) query() []byte {
	q := append(c.out[:5], "SELECT abalance FROM pgbench_accounts WHERE aid = "...)
	q = strconv.AppendUint(q, c.rng.Uint64()%100000+1, 10)
	q = append(q, ';', 0)
	q[0] = 'Q'
	binary.BigEndian.PutUint32(q[1:], uint32(len(q)-1))
	c.out = q
	return q
}

// answered tells whether c.in holds a whole answer (up to ReadyForQuery),
// and then empties it.
func (c *client) answered() bool {
	b := c.in[:c.n]
	for len(b) >= 5 {
		l := 1 + int(binary.BigEndian.Uint32(b[1:]))
		if len(b) < l {
			return false
		}
		switch b[0] {
		case 'E':
			log.Fatalf("server error: %q", b[5:l])
		case 'Z':
			c.n = 0
			return true
		}
		b = b[l:]
	}
	if c.n == len(c.in) {
		log.Fatal("answer larger than the buffer")
	}
	return false
}

func main() {
	mode := flag.String("mode", "readfirst", "net, readfirst, waitfirst or loop")
	clients := flag.Int("c", 1000, "connections")
	txs := flag.Int("t", 200, "transactions per connection")
	threads := flag.Int("j", 1, "GOMAXPROCS; loop: threads")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("floor: ")
	runtime.GOMAXPROCS(*threads)
	cs := make([]*client, *clients)
	for i := range cs {
		cs[i] = dial(*mode, *txs, uint64(i))
	}
	var r0, r1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &r0)
	start := time.Now()
	var wg sync.WaitGroup
	switch *mode {
	case "net":
		for _, c := range cs {
			wg.Go(func() { viaNet(c) })
		}
	case "readfirst", "waitfirst":
		for _, c := range cs {
			wg.Go(func() { viaRaw(c, *mode == "waitfirst") })
		}
	case "loop":
		per := (len(cs) + *threads - 1) / *threads
		for lo := 0; lo < len(cs); lo += per {
			part := cs[lo:min(lo+per, len(cs))]
			wg.Go(func() { viaLoop(part) })
		}
	default:
		log.Fatalf("-mode %q: want net, readfirst, waitfirst or loop", *mode)
	}
	wg.Wait()
	elapsed := time.Since(start)
	syscall.Getrusage(syscall.RUSAGE_SELF, &r1)
	n := float64(*clients * *txs)
	user := float64(syscall.TimevalToNsec(r1.Utime)-syscall.TimevalToNsec(r0.Utime)) / 1e3 / n
	sys := float64(syscall.TimevalToNsec(r1.Stime)-syscall.TimevalToNsec(r0.Stime)) / 1e3 / n
	fmt.Printf("floor %s: clients %d, threads %d, tps %.0f, CPU %.2f us/tx (user %.2f, sys %.2f)\n",
		*mode, *clients, *threads, n/elapsed.Seconds(), user+sys, user, sys)
}

// dial connects through pgconn (PG* environment) and takes the socket over.
func dial(mode string, txs int, seed uint64) *client {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pc, err := pgconn.Connect(ctx, "")
	if err != nil {
		log.Fatal(err)
	}
	hj, err := pc.Hijack()
	if err != nil {
		log.Fatal(err)
	}
	c := &client{conn: hj.Conn, left: txs, in: make([]byte, 1024), out: make([]byte, 0, 128), rng: rand.NewPCG(seed, 7)}
	if mode == "loop" {
		sc, ok := hj.Conn.(interface{ File() (*os.File, error) })
		if !ok {
			log.Fatalf("loop: a %T has no file", hj.Conn)
		}
		if c.file, err = sc.File(); err != nil {
			log.Fatal(err)
		}
		c.fd = int(c.file.Fd())
		if err := syscall.SetNonblock(c.fd, true); err != nil {
			log.Fatal(err)
		}
	}
	return c
}

func viaNet(c *client) {
	for ; c.left > 0; c.left-- {
		if _, err := c.conn.Write(c.query()); err != nil {
			log.Fatal(err)
		}
		for !c.answered() {
			n, err := c.conn.Read(c.in[c.n:])
			if err != nil {
				log.Fatal(err)
			}
			c.n += n
		}
	}
}

func viaRaw(c *client, waitFirst bool) {
	rc, err := c.conn.(syscall.Conn).SyscallConn()
	if err != nil {
		log.Fatal(err)
	}
	var q []byte
	var errno syscall.Errno
	read := func(fd uintptr) bool {
		if q != nil {
			_, _, errno = syscall.RawSyscall6(syscall.SYS_SENDTO, fd, uintptr(unsafe.Pointer(&q[0])), uintptr(len(q)), syscall.MSG_NOSIGNAL, 0, 0)
			if q = nil; errno != 0 {
				return true
			}
			if waitFirst {
				return false
			}
		}
		n, _, e := syscall.RawSyscall6(syscall.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&c.in[c.n])), uintptr(len(c.in)-c.n), 0, 0, 0)
		if e == syscall.EAGAIN {
			return false
		}
		if errno = e; e == 0 {
			c.n += int(n)
		}
		return true
	}
	for ; c.left > 0; c.left-- {
		q = c.query()
		for !c.answered() {
			if err := rc.Read(read); err != nil {
				log.Fatal(err)
			}
			if errno != 0 {
				log.Fatal(errno)
			}
		}
	}
}

func viaLoop(cs []*client) {
	runtime.LockOSThread()
	ep, err := syscall.EpollCreate1(0)
	if err != nil {
		log.Fatal(err)
	}
	byFd := make(map[int32]*client, len(cs))
	for _, c := range cs {
		byFd[int32(c.fd)] = c
		ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(c.fd)}
		if err := syscall.EpollCtl(ep, syscall.EPOLL_CTL_ADD, c.fd, &ev); err != nil {
			log.Fatal(err)
		}
		if _, err := syscall.Write(c.fd, c.query()); err != nil {
			log.Fatal(err)
		}
	}
	evs := make([]syscall.EpollEvent, 256)
	for active := len(cs); active > 0; {
		n, err := syscall.EpollWait(ep, evs, -1)
		if err == syscall.EINTR {
			continue
		} else if err != nil {
			log.Fatal(err)
		}
		for _, e := range evs[:n] {
			c := byFd[e.Fd]
			m, err := syscall.Read(c.fd, c.in[c.n:])
			if err == syscall.EAGAIN {
				continue
			} else if err != nil {
				log.Fatal(err)
			}
			if c.n += m; !c.answered() {
				continue
			}
			if c.left--; c.left == 0 {
				active--
				syscall.EpollCtl(ep, syscall.EPOLL_CTL_DEL, c.fd, nil)
				continue
			}
			if _, err := syscall.Write(c.fd, c.query()); err != nil {
				log.Fatal(err)
			}
		}
	}
}
