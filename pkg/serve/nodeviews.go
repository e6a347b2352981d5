package serve

// Filtered node views: each filter's answer made once per count, kept
// within a memory bound.

import (
	clist "container/list"
	"context"
	"net/http"
	"sync"
)

// nodeViews are a count's filtered node views, by normalized filter
// (filterKey): each put together once, by the first request that asks,
// while the others that ask wait for it, and kept until the next count
// replaces the view, or until newer ones push it out: the views kept
// hold at most max bytes. A count's views go with it.
type nodeViews struct {
	max int

	mu    sync.Mutex
	size  int
	views map[string]*clist.Element // of *cachedView
	order *clist.List               // most recently used first
}

// cachedView is one filtered node view.
type cachedView struct {
	key   string
	done  chan struct{} // closed once encoded is set
	size  int
	ready bool
	// encoded is the view; zipped its body gzipped, once a client asks.
	encoded
	gz     sync.Once
	zipped []byte
}

// served is the view to serve to r: gzipped only where r asks for it,
// the view gzipped the first time one does.
func (c *cachedView) served(r *http.Request) encoded {
	e := encoded{body: c.body, etag: c.etag}
	if len(c.body) <= gzipOver || !acceptsGzip(r) {
		return e
	}
	c.gz.Do(func() { c.zipped = gzipped(c.body) })
	e.gz = c.zipped
	return e
}

func newNodeViews(max int) *nodeViews {
	return &nodeViews{max: max, views: map[string]*clist.Element{}, order: clist.New()}
}

// get is the view of key: kept, or made by build, one at a time per key
// and at most cap(builders) at once of all keys. It fails only when ctx
// ends first.
func (n *nodeViews) get(ctx context.Context, key string, builders chan struct{}, build func() *cachedView) (*cachedView, error) {
	for {
		n.mu.Lock()
		if el, ok := n.views[key]; ok {
			n.order.MoveToFront(el)
			c := el.Value.(*cachedView)
			n.mu.Unlock()
			select {
			case <-c.done:
				if c.ready {
					return c, nil
				}
				// Its maker gave up: make it, or wait for another.
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		c := &cachedView{key: key, done: make(chan struct{})}
		n.views[key] = n.order.PushFront(c)
		n.mu.Unlock()
		return n.make(ctx, c, builders, build)
	}
}

func (n *nodeViews) make(ctx context.Context, c *cachedView, builders chan struct{}, build func() *cachedView) (*cachedView, error) {
	defer close(c.done)
	select {
	case builders <- struct{}{}:
	case <-ctx.Done():
		n.drop(c)
		return nil, ctx.Err()
	}
	built := build()
	<-builders
	c.encoded = built.encoded
	c.size = len(built.body) + len(c.key)
	n.mu.Lock()
	defer n.mu.Unlock()
	c.ready = true
	n.size += c.size
	n.evictLocked()
	return c, nil
}

// drop forgets a view that was not made.
func (n *nodeViews) drop(c *cachedView) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if el, ok := n.views[c.key]; ok && el.Value == c {
		n.order.Remove(el)
		delete(n.views, c.key)
	}
}

// evictLocked pushes out the least recently used views made until those
// kept fit in max bytes (the newest may be all that is kept, or not even
// it: it is still served to those that asked).
func (n *nodeViews) evictLocked() {
	for el := n.order.Back(); el != nil && n.size > n.max; {
		prev := el.Prev()
		if c := el.Value.(*cachedView); c.ready {
			n.order.Remove(el)
			delete(n.views, c.key)
			n.size -= c.size
		}
		el = prev
	}
}
