// docindex search page: sign-in (authorization code + PKCE), search, facets, pages, download.
// No framework; every value from the API is inserted as text (textContent), never as HTML.
"use strict";
(function () {
  const T = {
    ja: {title: "文書検索", lang: "English", signin: "サインイン", signout: "サインアウト", query: "キーワード",
      sort: "並び順", relevance: "関連度", date: "更新日", search: "検索", pleaseSignIn: "サインインしてください。",
      results: (n) => `${n} 件`, none: "該当する文書はありません。", noFile: "該当するファイルはありません。",
      moreByMeaning: (n) => `ほかに意味の近いファイル ${n} 件`, onlyByMeaning: (n) => `キーワードを含むファイルはありません。意味の近いファイル ${n} 件`, extension: "種類", folder: "フォルダ",
      year: "年", ocr_status: "OCR", download: "ダウンロード", prev: "前へ", next: "次へ", clear: "絞り込みを解除",
      modified: "更新", error: "エラーが発生しました", within: "絞り込み:",
      openAt: (l) => `${l} を開く`, preview: "プレビュー", hidePreview: "プレビューを閉じる",
      previewOf: (l) => `${l} のプレビュー`, morePages: (n) => `ほか ${n} ページ`, pagesIn: "一致したページ",
      meaning: "言葉の意味でも探す", byMeaning: "意味で一致",
      answerTitle: "回答", noAnswer: "読めるファイルの中に答えは見つかりませんでした",
      noAnswerKind: "読めるファイルの中に、聞かれた種類の答え（金額・日付・回数など）は見つかりませんでした", sources: "出典", answering: "回答を探しています…"},
    en: {title: "Document search", lang: "日本語", signin: "Sign in", signout: "Sign out", query: "Keywords",
      sort: "Sort by", relevance: "Relevance", date: "Modified", search: "Search", pleaseSignIn: "Please sign in.",
      results: (n) => `${n} results`, none: "No documents match.", noFile: "No file.",
      moreByMeaning: (n) => `${n} more close in meaning`, onlyByMeaning: (n) => `No file contains the words; ${n} close in meaning`, extension: "Type", folder: "Folder",
      year: "Year", ocr_status: "OCR", download: "Download", prev: "Previous", next: "Next", clear: "Clear filters",
      modified: "Modified", error: "Something went wrong", within: "Filters:",
      openAt: (l) => `Open at ${l}`, preview: "Preview", hidePreview: "Hide preview",
      previewOf: (l) => `Preview of ${l}`, morePages: (n) => `${n} more pages`, pagesIn: "Matching pages",
      meaning: "Also search by meaning", byMeaning: "Found by meaning",
      answerTitle: "Answer", noAnswer: "No answer was found in the files you can read",
      noAnswerKind: "The files you can read do not hold the kind of answer asked for (an amount, a date, a count)", sources: "Sources", answering: "Looking for an answer…"},
  };
  // Name search, sorting as Explorer does, the date range (docs/search-api.md).
  Object.assign(T.ja, {scope: "検索対象", scopeContent: "内容", scopeName: "ファイル名", name: "名前 (昇順)",
    nameDesc: "名前 (降順)", dateAsc: "更新日 (古い順)", size: "サイズ (大きい順)", sizeAsc: "サイズ (小さい順)",
    dateNewest: "更新日 (新しい順)", dateRange: "更新日の範囲", dateFrom: "開始日", dateTo: "終了日", apply: "適用"});
  Object.assign(T.en, {scope: "Search in", scopeContent: "Content", scopeName: "File names", name: "Name (A-Z)",
    nameDesc: "Name (Z-A)", dateAsc: "Modified (oldest)", size: "Size (largest)", sizeAsc: "Size (smallest)",
    dateNewest: "Modified (newest)", dateRange: "Modified between", dateFrom: "From", dateTo: "To", apply: "Apply"});
  // The answer box's labels (issue 48): asking explicitly, and why an answer was refused.
  Object.assign(T.ja, {ask: "質問として回答を探す",
    noAnswerFocus: "読めるファイルは聞かれたことの話題に触れていますが、聞かれたこと自体の答えはありませんでした",
    noAnswerFlagged: "答えを含むのは、AI への指示が書き込まれたファイルだけでした（管理者に確認を依頼してください）"});
  Object.assign(T.en, {ask: "Answer it as a question",
    noAnswerFocus: "The files you can read mention the subject, but none answers what was asked",
    noAnswerFlagged: "Only a file carrying instructions aimed at an AI assistant holds an answer (ask an administrator to check it)"});
  let lang = localStorage.getItem("docindex.lang") || "ja";
  let config = null;
  const state = {q: "", sort: "relevance", mode: "auto", prefix: "", extension: "", ocr_status: "", modified_from: "", modified_to: "", page: 1};
  Object.assign(state, {scope: "content", order: ""});
  const $ = (id) => document.getElementById(id);
  const t = (k, ...a) => { const v = T[lang][k]; return typeof v === "function" ? v(...a) : v; };
  const el = (tag, props, ...kids) => {
    const e = document.createElement(tag);
    Object.assign(e, props || {});
    for (const k of kids) e.append(k);
    return e;
  };

  function applyLanguage() {
    document.documentElement.lang = lang;
    document.querySelectorAll("[data-i18n]").forEach((e) => { e.textContent = t(e.dataset.i18n); });
    document.title = t("title") + " - docindex";
  }

  // ---- sign-in: authorization code + PKCE (S256)
  const b64url = (bytes) => btoa(String.fromCharCode(...new Uint8Array(bytes))).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  const randomString = () => b64url(crypto.getRandomValues(new Uint8Array(32)));
  const redirectUri = () => location.origin + location.pathname;

  async function signIn() {
    const verifier = randomString();
    const stateValue = randomString();
    sessionStorage.setItem("docindex.pkce", JSON.stringify({verifier, state: stateValue}));
    const challenge = b64url(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier)));
    const params = new URLSearchParams({response_type: "code", client_id: config.clientId, redirect_uri: redirectUri(),
      scope: config.scopes, state: stateValue, code_challenge: challenge, code_challenge_method: "S256"});
    location.assign(config.authorizeUrl + "?" + params);
  }

  async function finishSignIn(code, returnedState) {
    const saved = JSON.parse(sessionStorage.getItem("docindex.pkce") || "{}");
    sessionStorage.removeItem("docindex.pkce");
    history.replaceState(null, "", redirectUri());
    if (!saved.verifier || saved.state !== returnedState) return;
    const body = new URLSearchParams({grant_type: "authorization_code", code, client_id: config.clientId,
      redirect_uri: redirectUri(), code_verifier: saved.verifier});
    const r = await fetch(config.tokenUrl, {method: "POST", body, headers: {"Content-Type": "application/x-www-form-urlencoded"}});
    if (!r.ok) return;
    const tokens = await r.json();
    sessionStorage.setItem("docindex.token", config.apiToken === "id" ? tokens.id_token : tokens.access_token);
  }

  function token() { return sessionStorage.getItem("docindex.token"); }
  function claims() {
    try { return JSON.parse(atob(token().split(".")[1].replace(/-/g, "+").replace(/_/g, "/"))); } catch (e) { return {}; }
  }

  function signOut() {
    sessionStorage.removeItem("docindex.token");
    if (config.logoutUrl) {
      const params = new URLSearchParams({client_id: config.clientId, logout_uri: redirectUri(), post_logout_redirect_uri: redirectUri()});
      location.assign(config.logoutUrl + "?" + params);
    } else { location.reload(); }
  }

  async function api(path, params) {
    const qs = params ? "?" + new URLSearchParams(params) : "";
    const r = await fetch(path + qs, {headers: {Authorization: "Bearer " + token()}});
    if (r.status === 401) { sessionStorage.removeItem("docindex.token"); showSignedIn(); throw new Error("401"); }
    if (!r.ok) throw new Error(String(r.status));
    return r.json();
  }

  // A page's preview: a picture (PDF, scans) or the page's text; fetched with the token, shown as a blob URL.
  // Asked with the query the hit was found by: a scan's page comes with the query's words marked.
  // With ``quote`` (an answer's citation): a text page shows the quote marked, and a page without a preview is left out.
  async function loadPreview(hit, page, figure, q, quote) {
    if (figure.dataset.loaded) return;
    figure.dataset.loaded = "1";
    try {
      // a citation's quote is marked as such (its lines; on a scan from the OCR's word boxes), a search's words as words
      const qs = quote ? "?" + new URLSearchParams({quote: quote.slice(0, 600)}) : q ? "?" + new URLSearchParams({q: q.slice(0, 256)}) : "";
      const r = await fetch(`documents/${hit.id}/pages/${page.number}/preview${qs}`, {headers: {Authorization: "Bearer " + token()}});
      if (!r.ok) throw new Error(String(r.status));
      if ((r.headers.get("Content-Type") || "").startsWith("image/")) {
        const img = el("img", {alt: t("previewOf", page.label), src: URL.createObjectURL(await r.blob())});
        figure.replaceChildren(img);
      } else {
        const data = await r.json();
        figure.replaceChildren(el("pre", {className: "page-text", tabIndex: 0}, ...withQuote(data.text, quote)));
      }
    } catch (e) {
      if (quote) figure.hidden = true;
      else figure.replaceChildren(el("p", {textContent: t("error")}));
    }
  }

  // A page's text as text nodes, the quote (where it is found) in a <mark>: never HTML. A quote is the page's text
  // with its line breaks and spaces folded (as passages keep it): it is looked for whatever the white space.
  function withQuote(text, quote) {
    const chars = Array.from((quote || "").replace(/\s+/g, ""));
    if (!chars.length) return [text];
    const found = new RegExp(chars.map((c) => c.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("\\s*")).exec(text);
    if (!found) return [text];
    return [text.slice(0, found.index), el("mark", {className: "quote", textContent: found[0]}),
      text.slice(found.index + found[0].length)];
  }

  // A question, not a keyword search: a question word, a question mark, 教えて…, or an English question. Only then is
  // the answer box shown by itself (docs/search-api.md#answers); the ask button asks for any query.
  const QUESTION = /[?？]\s*$|いつ|どこ|だれ|誰|どなた|なに|何|なぜ|どうして|どう(?:すれ|したら|やって|なる|なっ)|どの|どれ|どんな|どちら|いくら|いくつ|教えて|知りたい|とは|って(?:何|なに)|ですか|ますか|でしょうか|^(?:what|when|where|who|whom|which|why|how|is|are|can|do|does|did|should)\b/i;
  function isQuestion(q) { return QUESTION.test(q.trim()); }

  // ---- the answer box (GET /answer): the answer and its citations, every value inserted as text
  async function runAnswer(asked_explicitly) {
    const box = $("answer");
    const wanted = asked_explicitly || isQuestion(state.q);
    if (!config || config.answers === "off" || !state.q || state.page !== 1 || state.scope === "name" || !wanted) {
      box.hidden = true; return;
    }
    const asked = state.q;
    box.hidden = false;
    box.replaceChildren(el("h2", {id: "answer-title", textContent: t("answerTitle")}), el("p", {textContent: t("answering")}));
    let data;
    try {
      data = await api("answer", state.prefix ? {q: asked, prefix: state.prefix} : {q: asked});
    } catch (e) { box.hidden = true; return; }
    if (asked !== state.q) return;  // a newer search replaced this one
    renderAnswer(box, data);
  }

  function renderAnswer(box, data) {
    const title = el("h2", {id: "answer-title", textContent: t("answerTitle")});
    if (data.no_answer) {
      const why = {kind_not_found: t("noAnswerKind"), focus_not_found: t("noAnswerFocus"), flagged_file: t("noAnswerFlagged")}[data.reason] || t("noAnswer");
      box.replaceChildren(title, el("p", {id: "no-answer", className: "answer-none", textContent: why}));
      return;
    }
    const list = el("ol", {className: "citations", ariaLabel: t("sources")});
    for (const citation of data.citations) {
      const name = citation.path.split("/").pop();
      // the place as the index names it: p. 3, シート 備考, スライド 2, 本文 (a file without pages)
      const page = {number: citation.page, label: citation.label || `p. ${citation.page}`};
      const hit = {id: citation.id};
      const open = el("button", {type: "button", className: "page-open", textContent: `${name} ${page.label}`,
        title: t("openAt", page.label), onclick: () => openAt(hit, page)});
      const figure = el("figure", {className: "preview"});
      list.append(el("li", {className: "citation"}, open, el("blockquote", {className: "quote-text", textContent: citation.quote}), figure));
      loadPreview(hit, page, figure, "", citation.quote);
    }
    box.replaceChildren(title, el("p", {id: "answer-text", className: "answer-text", textContent: data.answer}), list);
  }

  // The original opens in a tab of its own: the results stay where they are. The tab is opened at the click (a
  // browser lets a page open one only then) and sent to the link once the API has issued it.
  async function openAt(hit, page) {
    const tab = window.open("about:blank", "_blank");
    if (tab) tab.opener = null;
    try {
      const link = await api("documents/" + hit.id + "/download", page ? {page: page.number} : null);
      if (tab) tab.location.replace(link.url); else window.open(link.url, "_blank", "noopener");
    } catch (e) { if (tab) tab.close(); }
  }

  // The pages that match: label (opens the file there), snippet, and a preview (the best page's shown at once).
  function hitPages(hit) {
    const pages = hit.pages || [];
    if (!pages.length) return "";
    const list = el("ul", {className: "hit-pages", ariaLabel: t("pagesIn")});
    const q = state.q;
    pages.forEach((page, i) => {
      const figure = el("figure", {className: "preview", hidden: i > 0});
      const toggle = el("button", {type: "button", className: "toggle-preview", textContent: i > 0 ? t("preview") : t("hidePreview")});
      toggle.setAttribute("aria-expanded", String(i === 0));
      toggle.onclick = () => {
        figure.hidden = !figure.hidden;
        toggle.setAttribute("aria-expanded", String(!figure.hidden));
        toggle.textContent = figure.hidden ? t("preview") : t("hidePreview");
        if (!figure.hidden) loadPreview(hit, page, figure, q);
      };
      const label = el("button", {type: "button", className: "page-open", textContent: page.label,
        title: t("openAt", page.label), onclick: () => openAt(hit, page)});
      label.setAttribute("aria-label", t("openAt", page.label));
      list.append(el("li", {}, label, " ", el("span", {className: "snippet"}, marked(page.snippet, "")), " ", toggle, figure));
      if (i === 0) loadPreview(hit, page, figure, q);
    });
    const more = (hit.matching_pages || 0) - pages.length;
    return el("div", {}, list, more > 0 ? el("p", {className: "more-pages", textContent: t("morePages", more)}) : "");
  }

  // ---- search and rendering
  async function run() {
    const params = {};
    for (const [k, v] of Object.entries(state)) if (v !== "" && v !== null) params[k] = v;
    $("status").textContent = "…";
    runAnswer();
    try {
      render(await api("search", params));
    } catch (e) { $("status").textContent = t("error"); }
  }

  const dateText = (iso) => (iso ? new Date(iso).toLocaleDateString(lang === "ja" ? "ja-JP" : "en-GB") : "");
  const sizeText = (n) => (n == null ? "" : n < 1024 ? `${n} B` : n < 1048576 ? `${(n / 1024).toFixed(1)} KB` : `${(n / 1048576).toFixed(1)} MB`);

  function marked(segments, fallback) {
    const span = el("span");
    if (!segments || !segments.length) { span.textContent = fallback || ""; return span; }
    for (const s of segments) span.append(s.match ? el("mark", {textContent: s.text}) : document.createTextNode(s.text));
    return span;
  }

  function folderButtons(folder) {
    const wrap = el("span", {className: "folder"});
    let acc = "";
    for (const part of folder.split("/").filter(Boolean)) {
      acc += part + "/";
      const prefix = acc;
      wrap.append(el("button", {type: "button", textContent: part, onclick: () => { state.prefix = prefix; state.page = 1; run(); }}), " / ");
    }
    return wrap;
  }

  function render(data) {
    // The files that contain the query, and apart from them those found by meaning alone.
    const byMeaning = data.more_by_meaning || 0;
    const status = $("status");
    status.replaceChildren();
    if (data.total) status.append(el("span", {id: "total", textContent: t("results", data.total)}));
    if (data.total && byMeaning) status.append(" · ");
    if (byMeaning) status.append(el("span", {id: "by-meaning", textContent: t(data.total ? "moreByMeaning" : "onlyByMeaning", byMeaning)}));
    if (!data.total && !byMeaning) status.append(el("span", {id: "no-file", textContent: t(state.mode === "auto" ? "noFile" : "none")}));
    const list = $("results");
    list.replaceChildren();
    for (const hit of data.hits) {
      const name = el("span", {className: "name"}, marked(hit.filename_highlight, hit.filename));
      const open = el("button", {type: "button", className: "download", textContent: t("download"),
        onclick: async () => { const link = await api("documents/" + hit.id + "/download"); location.assign(link.url); }});
      list.append(el("li", {},
        el("div", {}, el("span", {className: "icon", textContent: (hit.extension || "?").toUpperCase()}), name,
          hit.found_by === "meaning" ? el("span", {className: "by-meaning", textContent: t("byMeaning")}) : ""),
        el("div", {}, folderButtons(hit.folder)),
        window.DocindexFilePath ? window.DocindexFilePath.row(hit.location, lang) : "",
        el("p", {className: "snippet"}, marked(hit.snippet, "")),
        hitPages(hit),
        el("div", {className: "meta"}, `${t("modified")}: ${dateText(hit.modified)} · ${sizeText(hit.size)} `, open)));
    }
    renderFacets(data.facets);
    renderPages(data);
    renderFilters();
  }

  function renderFacets(facets) {
    const box = $("facets");
    box.replaceChildren();
    for (const name of ["folder", "extension", "year", "ocr_status"]) {
      const items = facets[name] || [];
      if (!items.length) continue;
      const ul = el("ul");
      for (const item of items) {
        const label = name === "folder" ? item.value.split("/").filter(Boolean).pop() : item.value;
        ul.append(el("li", {}, el("button", {type: "button", className: "facet-" + name, textContent: `${label} (${item.count})`,
          onclick: () => { pick(name, item.value); }})));
      }
      box.append(el("h2", {textContent: t(name)}), ul);
      if (name === "year") box.append(dateRange());
    }
    if (!box.querySelector("#date-range")) box.append(dateRange());
  }

  // From / to, beside the year facet: the files modified on those days and between them.
  function dateRange() {
    const from = el("input", {type: "date", id: "modified-from", value: state.modified_from});
    const to = el("input", {type: "date", id: "modified-to", value: state.modified_to});
    const form = el("form", {id: "date-range", className: "date-range"},
      el("h2", {textContent: t("dateRange")}),
      el("label", {htmlFor: "modified-from", textContent: t("dateFrom")}), from,
      el("label", {htmlFor: "modified-to", textContent: t("dateTo")}), to,
      el("button", {type: "submit", id: "apply-dates", textContent: t("apply")}));
    form.onsubmit = (ev) => {
      ev.preventDefault();
      state.modified_from = from.value; state.modified_to = to.value; state.page = 1; run();
    };
    return form;
  }

  function dateFilterText() {
    const from = state.modified_from, to = state.modified_to;
    if (!from && !to) return "";
    const year = from.slice(0, 4);
    if (from === `${year}-01-01` && to === `${year}-12-31`) return year;
    return `${from || "…"}〜${to || "…"}`;
  }

  function pick(name, value) {
    if (name === "folder") state.prefix = value;
    else if (name === "year") { state.modified_from = value + "-01-01"; state.modified_to = value + "-12-31"; }
    else state[name] = value;
    state.page = 1;
    run();
  }

  function renderFilters() {
    const active = [state.prefix, state.extension, state.ocr_status, dateFilterText()].filter(Boolean);
    const p = $("filters");
    p.replaceChildren();
    if (!active.length) return;
    p.append(t("within") + " " + active.join(" · ") + " ",
      el("button", {type: "button", id: "clear", textContent: t("clear"), onclick: () => {
        Object.assign(state, {prefix: "", extension: "", ocr_status: "", modified_from: "", modified_to: "", page: 1}); run(); }}));
  }

  function renderPages(data) {
    const nav = $("pages");
    nav.replaceChildren();
    const last = Math.max(1, Math.ceil(Math.min(data.total + (data.more_by_meaning || 0), 1000) / data.size));
    if (state.page > 1) nav.append(el("button", {type: "button", textContent: t("prev"), onclick: () => { state.page -= 1; run(); }}));
    if (state.page < last) nav.append(el("button", {type: "button", id: "next", textContent: t("next"), onclick: () => { state.page += 1; run(); }}));
  }

  function showSignedIn() {
    const inside = Boolean(token());
    $("app").hidden = !inside;
    $("signed-out").hidden = inside;
    $("signin").hidden = inside;
    $("signout").hidden = !inside;
    const c = inside ? claims() : {};
    $("who").textContent = inside ? (c.email || c.username || c["cognito:username"] || "") : "";
  }

  async function start() {
    applyLanguage();
    config = await (await fetch("config.json")).json();
    const params = new URLSearchParams(location.search);
    if (params.get("code")) await finishSignIn(params.get("code"), params.get("state"));
    $("signin").onclick = signIn;
    $("signout").onclick = signOut;
    $("lang").onclick = () => { lang = lang === "ja" ? "en" : "ja"; localStorage.setItem("docindex.lang", lang); applyLanguage(); };
    $("search").onsubmit = (ev) => {
      ev.preventDefault();
      state.q = $("q").value.trim(); state.mode = $("meaning").checked ? "auto" : "keyword";
      [state.sort, state.order] = ($("sort").value + ":").split(":");
      state.scope = $("scope-name").checked ? "name" : "content";
      state.page = 1; run();
    };
    $("ask").hidden = config.answers === "off";
    $("ask").onclick = () => {
      state.q = $("q").value.trim(); state.scope = $("scope-name").checked ? "name" : "content";
      if (state.scope !== "name") runAnswer(true);
    };
    showSignedIn();
    if (token()) { $("q").focus(); }
  }
  document.addEventListener("DOMContentLoaded", start);
})();
