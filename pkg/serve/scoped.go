package serve

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/accelc/accelc/pkg/catalogdoc"
	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/inventory"
)

// What one user is shown, with Access. The documents are encoded once per
// count for everyone; a user who may not list pods in some namespace whose
// figures they carry gets a copy without those figures, put together once
// per count and scope (the namespaces it may read) and kept with the
// count's filtered node views for the users with the same scope. A user
// who may list pods everywhere, or in every namespace concerned, gets the
// documents as they are, at the cost of its kept decisions' lookups.

// noteFigures notes which namespaces the count's per-namespace figures
// come from: each team whose quota use is counted (queue.teams[].flavors[]
// used and left sum its namespaces' pods), and each namespace whose pods
// hold devices on a node (inUseByNamespace).
func (v *view) noteFigures(m *compile.Model) {
	counted := map[string]bool{}
	for _, p := range v.doc.Profiles {
		if p.Queue == nil {
			continue
		}
		for _, t := range p.Queue.Teams {
			for _, f := range t.Flavors {
				if f.Used != nil {
					counted[t.Team] = true
				}
			}
		}
	}
	v.figures = map[string][]string{}
	teamNS := map[string]bool{}
	for _, t := range m.Teams {
		if counted[t.Name] {
			v.figures[t.Name] = t.Namespaces
			for _, ns := range t.Namespaces {
				teamNS[ns] = true
			}
		}
	}
	v.teamNS = slices.Sorted(maps.Keys(teamNS))
	podNS := map[string]bool{}
	for i := range v.inv.Nodes {
		for ns := range v.inv.Nodes[i].InUseBy {
			podNS[ns] = true
		}
	}
	v.podNamespaces = slices.Sorted(maps.Keys(podNS))
}

// podScope is which of the view's pod namespaces the request's user may
// list pods in: nil (and "") when it may see all of them, or when the
// server asks no one; else the set and its key for the kept views.
func (s *Server) podScope(r *http.Request, v *view) (shown map[string]bool, key string) {
	who := requesterOf(r)
	if who == nil || len(v.podNamespaces) == 0 {
		return nil, ""
	}
	allowed, all := s.opts.Access.podsIn(r.Context(), who.user, v.podNamespaces)
	if all {
		return nil, ""
	}
	shown = make(map[string]bool, len(allowed))
	for _, ns := range allowed {
		shown[ns] = true
	}
	return shown, "&namespaces=" + strings.Join(allowed, ",")
}

// hiddenTeams are the teams whose quota use the request's user is not
// shown: those with a namespace it may not list pods in. Nil when it sees
// them all, or when the server asks no one.
func (s *Server) hiddenTeams(r *http.Request, v *view) []string {
	who := requesterOf(r)
	if who == nil || len(v.teamNS) == 0 {
		return nil
	}
	allowed, all := s.opts.Access.podsIn(r.Context(), who.user, v.teamNS)
	if all {
		return nil
	}
	var hidden []string
	for _, team := range slices.Sorted(maps.Keys(v.figures)) {
		for _, ns := range v.figures[team] {
			if _, ok := slices.BinarySearch(allowed, ns); !ok {
				hidden = append(hidden, team)
				break
			}
		}
	}
	return hidden
}

func hidesSome(inUseBy map[string]int, shown map[string]bool) bool {
	for ns := range inUseBy {
		if !shown[ns] {
			return true
		}
	}
	return false
}

// scopedNode is n with only the shown namespaces' use.
func scopedNode(n *inventory.Node, shown map[string]bool) *inventory.Node {
	c := *n
	c.InUseBy = nil
	for ns, used := range n.InUseBy {
		if shown[ns] {
			if c.InUseBy == nil {
				c.InUseBy = map[string]int{}
			}
			c.InUseBy[ns] = used
		}
	}
	return &c
}

// withoutFigures are the profiles with the hidden teams' quota use (used,
// left) taken out; their quotas stay, as the configuration says them.
func withoutFigures(profiles []liveProfile, hidden []string) []liveProfile {
	out := make([]liveProfile, len(profiles))
	for i, p := range profiles {
		out[i] = p
		if p.Queue == nil {
			continue
		}
		q := *p.Queue
		q.Teams = slices.Clone(q.Teams)
		for j, t := range q.Teams {
			if !slices.Contains(hidden, t.Team) {
				continue
			}
			flavors := make([]catalogdoc.FlavorQuota, len(t.Flavors))
			for k, f := range t.Flavors {
				flavors[k] = catalogdoc.FlavorQuota{Flavor: f.Flavor, Quota: f.Quota}
			}
			q.Teams[j].Flavors = flavors
		}
		out[i].Queue = &q
	}
	return out
}

// scoped is a document made for one scope of users, kept with the
// count's node views under key; its ETag is base's with the scope's.
func (s *Server) scoped(w http.ResponseWriter, r *http.Request, v *view, key, base, contentType string, build func() []byte) {
	c, err := v.filtered.get(r.Context(), key, s.build, func() *cachedView {
		sum := sha256.Sum256([]byte(key))
		return &cachedView{encoded: encoded{body: build(), etag: strings.TrimSuffix(base, `"`) + "-" + hex.EncodeToString(sum[:6]) + `"`}}
	})
	if err != nil {
		tooLong(w)
		return
	}
	serveEncoded(w, r, c.served(r), contentType)
}

// profiles is every profile, without the quota use of the teams the user
// may not see.
func (s *Server) profiles(w http.ResponseWriter, r *http.Request, v *view) {
	hidden := s.hiddenTeams(r, v)
	if hidden == nil {
		serveEncoded(w, r, v.profiles, "application/json")
		return
	}
	s.scoped(w, r, v, "profiles&hide="+strings.Join(hidden, ","), v.profiles.etag, "application/json", func() []byte {
		return mustJSON(profilesResponse{Meta: v.meta(), Document: v.doc, Profiles: withoutFigures(v.live, hidden)})
	})
}

// profile is one profile, as profiles.
func (s *Server) profile(w http.ResponseWriter, r *http.Request, v *view) {
	name := r.PathValue("name")
	e, ok := v.byProfile[name]
	if !ok {
		writeError(w, http.StatusNotFound, Error{Error: fmt.Sprintf("no profile %q: GET /api/%s/profiles lists them", name, APIVersion)})
		return
	}
	hidden := s.hiddenTeams(r, v)
	if hidden == nil {
		serveEncoded(w, r, e, "application/json")
		return
	}
	s.scoped(w, r, v, "profile="+name+"&hide="+strings.Join(hidden, ","), e.etag, "application/json", func() []byte {
		i := slices.IndexFunc(v.live, func(p liveProfile) bool { return p.Name == name })
		return mustJSON(profileResponse{Meta: v.meta(), Profile: withoutFigures(v.live[i:i+1], hidden)[0]})
	})
}

// page is the page, or its main part (?part=main); without the nodes for
// a user who may not list nodes.
func (s *Server) page(w http.ResponseWriter, r *http.Request, v *view) {
	part := r.URL.Query().Get("part") == "main"
	if who := requesterOf(r); who != nil {
		ok, err := s.opts.Access.may(r.Context(), who.user, nodesRight)
		if err != nil {
			w.Header().Set("Retry-After", "1")
			writeError(w, http.StatusServiceUnavailable, Error{Error: "the cluster could not review access: " + err.Error()})
			return
		}
		if !ok {
			base, key := v.page.etag, "page&nodes=no"
			if part {
				base, key = v.fragment.etag, "fragment&nodes=no"
			}
			s.scoped(w, r, v, key, base, "text/html; charset=utf-8", func() []byte {
				page, fragment := renderPage(v, s.opts.Refresh, pageOptions{withoutNodes: true})
				if part {
					return fragment
				}
				return page
			})
			return
		}
	}
	if part {
		serveEncoded(w, r, v.fragment, "text/html; charset=utf-8")
		return
	}
	serveEncoded(w, r, v.page, "text/html; charset=utf-8")
}

// gate lets in, but for /healthz and /readyz, only requests whose token
// the cluster knows (Access). A browser asking for the page without
// credentials gets the page's shell, which asks for a token; every
// answer is private to its user.
func (s *Server) gate(next http.Handler) http.Handler {
	shell := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		serveEncoded(w, r, s.shell, "text/html; charset=utf-8")
	})
	authed := s.authenticated(next, nil)
	page := s.authenticated(next, shell)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch p := r.URL.Path; {
		case p == "/healthz" || p == "/readyz":
			next.ServeHTTP(w, r)
			return
		case p == "/" && r.URL.Query().Get("part") == "":
			w.Header().Set("Cache-Control", "private, no-cache")
			page.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Cache-Control", "private, no-cache")
		authed.ServeHTTP(w, r)
	})
}
