// docindex search page: where a hit lives on the file server, with buttons that copy its path.
// Browsers refuse file:// links from a web page, so the practical way to open the original is its
// path pasted into Explorer (\\server\share\...) or Finder (smb://...). The API gives the paths
// (docs/search-api.md#file-server-paths); this copies them exactly as given, and says so where the
// button is (a polite live region, and the button's own label for a moment).
"use strict";
(function () {
  // Its words come from the page's one translation table (app.js): row(location, t), t(key, ...args).
  const CONFIRM_MS = 2500;

  // The Clipboard API where the page may use it (https or localhost, with the user's gesture);
  // else the selection of a hidden text area, which every browser still copies.
  async function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) {
      try { await navigator.clipboard.writeText(text); return true; } catch (e) { /* fall back below */ }
    }
    const area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.style.position = "fixed";
    area.style.opacity = "0";
    document.body.append(area);
    area.select();
    let done = false;
    try { done = document.execCommand("copy"); } catch (e) { done = false; }
    area.remove();
    return done;
  }

  function button(label, text, what, status, t) {
    const b = document.createElement("button");
    b.type = "button";
    b.className = "copy-path";
    b.textContent = label;
    b.dataset.copy = text;
    b.onclick = async () => {
      const ok = await copyText(text);
      status.textContent = ok ? t("copiedWhat", what) : t("copyFailed");
      status.className = "copy-status" + (ok ? "" : " copy-failed");
      if (ok) {
        b.textContent = t("copied");
        b.classList.add("copied");
        clearTimeout(b._restore);
        b._restore = setTimeout(() => { b.textContent = label; b.classList.remove("copied"); }, CONFIRM_MS);
      }
    };
    return b;
  }

  // The hit's place on the file server (its path as text, selectable) and the copy buttons; "" when the
  // key is under no mapped share (no path rather than a wrong one).
  function row(location, t) {
    if (!location || !location.path) return "";
    const wrap = document.createElement("div");
    wrap.className = "location";
    const label = document.createElement("span");
    label.className = "location-label";
    label.textContent = t("where") + ": ";
    const path = document.createElement("code");
    path.className = "location-path";
    path.translate = false;  // the file server's own names
    path.textContent = location.path;
    const status = document.createElement("span");
    status.className = "copy-status";
    status.setAttribute("role", "status");
    status.setAttribute("aria-live", "polite");
    wrap.append(label, path, " ", button(t("copyPath"), location.path, t("pathWord"), status, t), " ",
      button(t("copyFolder"), location.folder, t("folderWord"), status, t));
    if (location.smb) wrap.append(" ", button(t("copySmb"), location.smb, t("smbWord"), status, t));
    wrap.append(" ", status);
    return wrap;
  }

  window.DocindexFilePath = {row, copyText};
})();
