// Refreshes the page's main part in place: it asks for it with the ETag
// it has, and replaces it only when the server has news. Open sections
// stay open.
(function () {
  const main = document.getElementById("main");
  const every = Number(main.dataset.refresh) || 5000;
  let etag = null;
  async function refresh() {
    try {
      const headers = etag ? { "If-None-Match": etag } : {};
      const res = await fetch("?part=main", { headers, cache: "no-store" });
      if (res.status === 200) {
        const open = new Set(Array.from(main.querySelectorAll("details[open]"), d => d.dataset.type));
        etag = res.headers.get("ETag");
        main.innerHTML = await res.text();
        main.querySelectorAll("details.type").forEach(d => { if (open.has(d.dataset.type)) d.open = true; });
      } else if (res.status === 304) {
        etag = res.headers.get("ETag") || etag;
      }
    } catch (e) {
      // The server is away: try again at the next tick.
    }
    setTimeout(refresh, every);
  }
  setTimeout(refresh, every);
})();
