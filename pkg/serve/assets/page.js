// Refreshes the page's main part in place: it asks for it with the ETag
// it has, and replaces it only when the server has news. Open sections
// stay open.
//
// Where the server asks the cluster who may read it, a browser without
// credentials gets the page's shell (data-login): it asks for a bearer
// token, keeps it in this tab's sessionStorage, and sends it with every
// request. Behind a proxy that signs users in (OpenShift's oauth-proxy
// passing their token), the page comes whole and its requests carry the
// proxy's cookie: no token is asked for.
(function () {
  const main = document.getElementById("main");
  const every = Number(main.dataset.refresh) || 5000;
  const key = "accelc-token";
  let etag = null;
  let asking = false;
  // Signed in with a pasted token: a way to forget it before the tab
  // closes (a shared machine). Behind a proxy that signs users in there
  // is no such token, and signing out is the proxy's.
  const session = document.querySelector("header .session");
  function headers() {
    const h = {};
    const token = sessionStorage.getItem(key);
    if (token) h["Authorization"] = "Bearer " + token;
    if (etag) h["If-None-Match"] = etag;
    return h;
  }
  function login(message) {
    sessionStorage.removeItem(key);
    etag = null;
    asking = true;
    if (session) session.hidden = true;
    main.replaceChildren(document.getElementById("login").content.cloneNode(true));
    main.querySelector(".login-error").textContent = message || "";
    main.querySelector("form").addEventListener("submit", ev => {
      ev.preventDefault();
      const token = main.querySelector("input[name=token]").value.trim();
      if (!token) return;
      sessionStorage.setItem(key, token);
      asking = false;
      refresh();
    });
  }
  async function refresh() {
    try {
      const res = await fetch("?part=main", { headers: headers(), cache: "no-store" });
      if (res.status === 200) {
        const open = new Set(Array.from(main.querySelectorAll("details[open]"), d => d.dataset.type));
        etag = res.headers.get("ETag");
        main.innerHTML = await res.text();
        if (session && sessionStorage.getItem(key)) session.hidden = false;
        main.querySelectorAll("details.type").forEach(d => { if (open.has(d.dataset.type)) d.open = true; });
      } else if (res.status === 304) {
        etag = res.headers.get("ETag") || etag;
      } else if (res.status === 401) {
        login(sessionStorage.getItem(key) ? "The cluster did not accept that token: it is unknown or expired." : "");
      } else if (res.status === 403) {
        // Signed in, not allowed: say what it needs, and let another
        // token be given.
        const body = await res.json().catch(() => ({}));
        login(body.error || "This user may not read the catalog.");
      }
    } catch (e) {
      // The server is away: try again at the next tick.
    }
  }
  if (session) {
    session.querySelector("button").addEventListener("click", () => login(""));
  }
  async function tick() {
    if (!asking) await refresh();
    setTimeout(tick, every);
  }
  if (main.dataset.login !== undefined) {
    if (sessionStorage.getItem(key)) {
      tick();
    } else {
      login("");
      setTimeout(tick, every);
    }
  } else {
    setTimeout(tick, every);
  }
})();
