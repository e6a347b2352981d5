package serve

// Listening: the HTTP server on an address, its shutdown, and the cap
// on open connections.

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// ListenAndServe serves on addr until ctx ends, then shuts down
// gracefully: requests in flight get grace to finish. The listener's
// address goes to ready before serving.
func (s *Server) ListenAndServe(ctx context.Context, addr string, grace time.Duration, ready func(net.Addr)) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      s.opts.RequestTimeout + 5*time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    16 << 10,
	}
	l = limitConns(l, srv, s.opts.MaxConnections)
	if s.opts.TLS != nil {
		l = tls.NewListener(l, s.opts.TLS)
	}
	if ready != nil {
		ready(l.Addr())
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return err
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// limitConns caps l at max connections open at once, and turns srv's
// keep-alive off while three quarters of them are open: a connection
// costs its buffers and goroutine (some 10 KiB) whether or not it asks
// anything, so clients that only hold connections open cannot grow the
// process either.
func limitConns(l net.Listener, srv *http.Server, max int) net.Listener {
	var open atomic.Int64
	srv.ConnState = func(_ net.Conn, state http.ConnState) {
		switch state {
		case http.StateNew:
			open.Add(1)
		case http.StateClosed, http.StateHijacked:
			open.Add(-1)
		default:
			return
		}
		srv.SetKeepAlivesEnabled(open.Load() < int64(max*3/4))
	}
	return &connLimit{Listener: l, slots: make(chan struct{}, max), done: make(chan struct{})}
}

type connLimit struct {
	net.Listener
	slots chan struct{}
	done  chan struct{}
	once  sync.Once
}

func (l *connLimit) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &limitedConn{Conn: c, release: func() { <-l.slots }}, nil
}

func (l *connLimit) Close() error {
	l.once.Do(func() { close(l.done) })
	return l.Listener.Close()
}

type limitedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitedConn) Close() error {
	c.once.Do(c.release)
	return c.Conn.Close()
}
