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
      modified: "更新", within: "絞り込み:",
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
      modified: "Modified", within: "Filters:",
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
  // Where a hit is on the file server and its copy buttons (filepath.js asks this table for its words).
  Object.assign(T.ja, {where: "ファイルサーバー上の場所", copyPath: "パスをコピー", copyFolder: "フォルダのパスをコピー",
    copySmb: "Mac 用 (smb://) をコピー", copied: "コピーしました", copyFailed: "コピーできませんでした。パスを選択してコピーしてください",
    copiedWhat: (what) => `${what}をコピーしました`, pathWord: "パス", folderWord: "フォルダのパス", smbWord: "Mac 用のアドレス"});
  Object.assign(T.en, {where: "On the file server", copyPath: "Copy path", copyFolder: "Copy folder path",
    copySmb: "Copy for Mac (smb://)", copied: "Copied", copyFailed: "Could not copy: select the path and copy it",
    copiedWhat: (what) => `${what} copied`, pathWord: "Path", folderWord: "Folder path", smbWord: "Mac address"});
  // The filters panel, facet values, page kinds, dates as each language writes them, and why a search found nothing.
  Object.assign(T.ja, {filters: "絞り込み", filtersActive: (n) => `絞り込み (${n})`, facetsLabel: "絞り込み", pagesNav: "ページ",
    ocr_none: "不要（文字データあり）", ocr_pending: "OCR 待ち", ocr_done: "OCR 済み", ocr_failed: "OCR 失敗",
    slide: (n) => `スライド ${n}`, sheet: "シート", part: "添付", body: "本文",
    uploaded: "S3 登録", uploadedWhy: "ファイルサーバーでの更新日時が分からないため、S3 に登録された日を表示しています",
    datePlaceholder: "2024/10/01", dateHint: "例: 2024/10/01", dateBad: "日付は 2024/10/01 の形で入力してください",
    dateOrder: "開始日が終了日より後になっています", rangeSep: "〜",
    noWords: "記号だけでは検索できません。文字や数字を含む言葉を入力してください。",
    ignoredWords: "入力した言葉は「の」「は」などのよく使われる言葉のため、内容の検索には使われません。言葉を足して検索するか、ファイル名で探してください。",
    searchNames: "ファイル名で探す", badRequest: "検索条件を読み取れませんでした。入力した内容を確かめてください。",
    error: "エラーが発生しました。しばらくしてからもう一度お試しください。", loading: "検索しています…"});
  Object.assign(T.en, {filters: "Filters", filtersActive: (n) => `Filters (${n})`, facetsLabel: "Filters", pagesNav: "Pages",
    ocr_none: "Not needed (has text)", ocr_pending: "Waiting for OCR", ocr_done: "Read by OCR", ocr_failed: "OCR failed",
    slide: (n) => `Slide ${n}`, sheet: "Sheet", part: "Attachment", body: "Body",
    uploaded: "Uploaded", uploadedWhy: "The file server's modification date is not known: this is the day it reached S3",
    datePlaceholder: "2024-10-01", dateHint: "e.g. 2024-10-01", dateBad: "Write the date as 2024-10-01",
    dateOrder: "The start date is after the end date", rangeSep: " – ",
    noWords: "Punctuation and symbols alone cannot be searched: type a word with letters or digits.",
    ignoredWords: "The words you typed are too common (like \"the\" or \"of\") to be searched in the contents: add a word, or look for them in file names.",
    searchNames: "Search file names", badRequest: "The search could not be read: check what you typed.",
    error: "Something went wrong. Please try again in a moment.", loading: "Searching…"});
  // The answer box's labels (issue 48): asking explicitly, and why an answer was refused.
  Object.assign(T.ja, {ask: "質問として回答を探す",
    noAnswerFocus: "読めるファイルは聞かれたことの話題に触れていますが、聞かれたこと自体の答えはありませんでした",
    noAnswerFlagged: "答えを含むのは、AI への指示が書き込まれたファイルだけでした（管理者に確認を依頼してください）"});
  Object.assign(T.en, {ask: "Answer it as a question",
    noAnswerFocus: "The files you can read mention the subject, but none answers what was asked",
    noAnswerFlagged: "Only a file carrying instructions aimed at an AI assistant holds an answer (ask an administrator to check it)"});
  let lang = localStorage.getItem("docindex.lang") === "en" ? "en" : "ja";
  let config = null;
  const state = {q: "", sort: "relevance", mode: "auto", prefix: "", extension: "", ocr_status: "", modified_from: "", modified_to: "", page: 1};
  Object.assign(state, {scope: "content", order: ""});
  // What the page shows now (a search's answer, or why it has none), drawn again when the language changes.
  const view = {data: null, problem: null, answer: null};
  let searches = 0;  // the last search asked: an older one's answer, arriving late, is not shown
  const $ = (id) => document.getElementById(id);
  const narrow = window.matchMedia("(max-width: 40rem)");
  const t = (k, ...a) => { const v = T[lang][k]; return typeof v === "function" ? v(...a) : v; };
  const el = (tag, props, ...kids) => {
    const e = document.createElement(tag);
    Object.assign(e, props || {});
    for (const k of kids) e.append(k);
    return e;
  };

  // Document content (names, paths, snippets) is in the documents' own language: marked translate=no.
  const content = (tag, props, ...kids) => { const e = el(tag, props, ...kids); e.translate = false; return e; };

  function applyLanguage() {
    document.documentElement.lang = lang;
    document.querySelectorAll("[data-i18n]").forEach((e) => { e.textContent = t(e.dataset.i18n); });
    document.querySelectorAll("[data-i18n-aria]").forEach((e) => { e.setAttribute("aria-label", t(e.dataset.i18nAria)); });
    $("lang").lang = lang === "ja" ? "en" : "ja";  // the switch names the other language in that language
    document.title = t("title") + " - docindex";
  }

  // The page in the other language: every label, and what it shows drawn again with the new words.
  function switchLanguage() {
    lang = lang === "ja" ? "en" : "ja";
    localStorage.setItem("docindex.lang", lang);
    applyLanguage();
    if (view.data) render(view.data);
    else renderFilters();
    if (view.problem) showProblem(view.problem);
    const box = $("answer");
    if (view.answer && !box.hidden) renderAnswer(box, view.answer);
  }

  // ---- dates: shown as the page's language writes them (2024/10/01, 1 Oct 2024), typed as an office types them
  const pad = (n) => String(n).padStart(2, "0");
  function dayText(d) {
    return lang === "ja" ? `${d.getFullYear()}/${pad(d.getMonth() + 1)}/${pad(d.getDate())}`
      : d.toLocaleDateString("en-GB", {day: "numeric", month: "short", year: "numeric"});
  }
  const dateText = (iso) => (iso ? dayText(new Date(iso)) : "");
  // A day typed (2024/10/01, 2024-10-1, 2024.10.01, 2024年10月1日, 20241001, full-width digits) as ISO; null if none.
  function parseDay(text) {
    const plain = (text || "").trim().replace(/[０-９]/g, (c) => String.fromCharCode(c.charCodeAt(0) - 0xfee0))
      .replace(/[／－．]/g, (c) => ({"／": "/", "－": "-", "．": "."})[c]);
    if (!plain) return "";
    const m = /^(\d{4})[/.\-年]\s*(\d{1,2})[/.\-月]\s*(\d{1,2})日?$/.exec(plain) || /^(\d{4})(\d{2})(\d{2})$/.exec(plain);
    if (!m) return null;
    const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
    const day = new Date(Date.UTC(y, mo - 1, d));
    if (day.getUTCFullYear() !== y || day.getUTCMonth() !== mo - 1 || day.getUTCDate() !== d) return null;
    return `${y}-${pad(mo)}-${pad(d)}`;
  }
  // An ISO day (state) as the date fields show it.
  const dayField = (iso) => (iso ? (lang === "ja" ? iso.replaceAll("-", "/") : iso) : "");
  // The browser's UTC offset (+09:00): the API's days and years are the user's, not UTC's.
  function utcOffset() {
    const minutes = -new Date().getTimezoneOffset();
    const sign = minutes < 0 ? "-" : "+";
    return `${sign}${pad(Math.floor(Math.abs(minutes) / 60))}:${pad(Math.abs(minutes) % 60)}`;
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
    if (!r.ok) {
      const failed = new Error(String(r.status));
      failed.status = r.status;
      try { failed.body = await r.json(); } catch (e) { failed.body = null; }
      throw failed;
    }
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
    view.answer = null;
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
    view.answer = data;
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

  // A page's name in the page's language: p. 87, Slide 12 / スライド 12, Sheet 売上, Attachment 見積.pdf (the names are the file's).
  function pageLabel(page) {
    const named = String(page.label || "").replace(/^(シート|添付)\s*/, "");
    if (page.kind === "slide") return t("slide", page.number);
    if (page.kind === "sheet") return el("span", {}, t("sheet") + " ", content("span", {textContent: named}));
    if (page.kind === "part") {
      if (page.label === "本文") return t("body");
      return el("span", {}, t("part") + " ", content("span", {textContent: named}));
    }
    return `p. ${page.number}`;
  }
  const labelText = (page) => { const l = pageLabel(page); return typeof l === "string" ? l : l.textContent; };

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
        if (!figure.hidden) loadPreview(hit, {...page, label: labelText(page)}, figure, q);
      };
      const named = {...page, label: labelText(page)};
      const label = el("button", {type: "button", className: "page-open", title: t("openAt", named.label),
        onclick: () => openAt(hit, page)}, pageLabel(page));
      label.setAttribute("aria-label", t("openAt", named.label));
      list.append(el("li", {}, label, " ", content("span", {className: "snippet"}, marked(page.snippet, "")), " ", toggle, figure));
      if (i === 0) loadPreview(hit, named, figure, q);
    });
    const more = (hit.matching_pages || 0) - pages.length;
    return el("div", {}, list, more > 0 ? el("p", {className: "more-pages", textContent: t("morePages", more)}) : "");
  }

  // ---- search and rendering
  async function run() {
    const params = {tz: utcOffset()};
    for (const [k, v] of Object.entries(state)) if (v !== "" && v !== null) params[k] = v;
    $("status").textContent = t("loading");
    view.data = null;
    view.problem = null;
    const ticket = ++searches;
    // Only punctuation or symbols: the API would refuse it (400 "no_words"); said here without asking.
    if (state.q && !/[\p{L}\p{N}]/u.test(state.q)) {
      $("answer").hidden = true;
      failed("noWords");
      return;
    }
    runAnswer();
    try {
      const data = await api("search", params);
      if (ticket !== searches) return;  // a newer search replaced this one
      view.data = data;
      render(data);
    } catch (e) {
      if (ticket !== searches) return;
      // 400 "no_words": nothing to search in what was typed; any other 400: the request; the rest: ours
      const reason = e.status === 400 ? ((e.body && e.body.reason) || "badRequest") : "error";
      failed(reason === "no_words" ? "noWords" : reason === "error" ? "error" : "badRequest");
    }
  }

  // No results to show, and why (a key of T): the filters stay, with nothing counted.
  function failed(key) {
    view.problem = key;
    $("results").replaceChildren();
    $("pages").replaceChildren();
    $("facets").replaceChildren(dateRange());
    renderFilters();
    showProblem(key);
  }

  function showProblem(key) {
    $("status").replaceChildren(el("span", {id: "problem", className: "problem", role: "alert", textContent: t(key)}));
  }
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
      wrap.append(content("button", {type: "button", textContent: part, onclick: () => { state.prefix = prefix; state.page = 1; run(); }}), " / ");
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
    if (data.notice && data.notice.reason === "ignored_words") {
      const names = el("button", {type: "button", id: "search-names", textContent: t("searchNames"), onclick: () => {
        $("scope-name").checked = true; state.scope = "name"; state.page = 1; run(); }});
      status.append(el("p", {id: "notice", className: "notice"}, t("ignoredWords"), " ", names));
    }
    const list = $("results");
    list.replaceChildren();
    for (const hit of data.hits) {
      const name = content("span", {className: "name"}, marked(hit.filename_highlight, hit.filename));
      const open = el("button", {type: "button", className: "download", textContent: t("download"),
        onclick: async () => { const link = await api("documents/" + hit.id + "/download"); location.assign(link.url); }});
      list.append(el("li", {},
        el("div", {}, content("span", {className: "icon", textContent: (hit.extension || "?").toUpperCase()}), name,
          hit.found_by === "meaning" ? el("span", {className: "by-meaning", textContent: t("byMeaning")}) : ""),
        el("div", {}, folderButtons(hit.folder)),
        window.DocindexFilePath ? window.DocindexFilePath.row(hit.location, t) : "",
        content("p", {className: "snippet"}, marked(hit.snippet, "")),
        hitPages(hit),
        el("div", {className: "meta"}, dateMeta(hit), ` · ${sizeText(hit.size)} `, open)));
    }
    renderFacets(data.facets);
    renderPages(data);
    renderFilters();
  }

  // 更新: 2024/10/01 (the file server's date), or S3 登録: … with why, when the object carried none.
  function dateMeta(hit) {
    const fromServer = hit.modified_source !== "s3";
    return el("span", {className: "modified", title: fromServer ? "" : t("uploadedWhy"),
      textContent: `${t(fromServer ? "modified" : "uploaded")}: ${dateText(hit.modified)}`});
  }

  // A facet's value as the page says it: a folder's name and a type are the files', an OCR status is translated.
  function facetLabel(name, value) {
    if (name === "folder") return content("span", {textContent: value.split("/").filter(Boolean).pop()});
    if (name === "ocr_status") return t("ocr_" + value) || value;
    if (name === "extension") return content("span", {textContent: value});
    return value;
  }

  function renderFacets(facets) {
    const box = $("facets");
    box.replaceChildren();
    for (const name of ["folder", "extension", "year", "ocr_status"]) {
      const items = facets[name] || [];
      if (!items.length) continue;
      const ul = el("ul");
      for (const item of items) {
        ul.append(el("li", {}, el("button", {type: "button", className: "facet-" + name, onclick: () => { pick(name, item.value); }},
          facetLabel(name, item.value), ` (${item.count})`)));
      }
      box.append(el("h2", {textContent: t(name)}), ul);
      if (name === "year") box.append(dateRange());
    }
    if (!box.querySelector("#date-range")) box.append(dateRange());
  }

  // From / to, beside the year facet: the files modified on those days and between them.
  // Text fields, not the browser's date picker: it writes the browser's format (mm/dd/yyyy), not the page's.
  function dateRange() {
    const field = (id, value) => el("input", {type: "text", id, value: dayField(value), inputMode: "numeric",
      autocomplete: "off", placeholder: t("datePlaceholder"), size: 11, maxLength: 16});
    const from = field("modified-from", state.modified_from);
    const to = field("modified-to", state.modified_to);
    const problem = el("p", {id: "date-problem", className: "date-problem", role: "alert", hidden: true});
    from.setAttribute("aria-describedby", "date-problem");
    to.setAttribute("aria-describedby", "date-problem");
    const form = el("form", {id: "date-range", className: "date-range", noValidate: true},
      el("h2", {textContent: t("dateRange")}),
      el("label", {htmlFor: "modified-from", textContent: t("dateFrom")}), from,
      el("label", {htmlFor: "modified-to", textContent: t("dateTo")}), to,
      problem,
      el("button", {type: "submit", id: "apply-dates", textContent: t("apply")}));
    form.onsubmit = (ev) => {
      ev.preventDefault();
      const [start, end] = [parseDay(from.value), parseDay(to.value)];
      from.setAttribute("aria-invalid", String(start === null));
      to.setAttribute("aria-invalid", String(end === null));
      const why = start === null || end === null ? t("dateBad") : start && end && start > end ? t("dateOrder") : "";
      problem.textContent = why;
      problem.hidden = !why;
      if (why) { (start === null || (start && end && start > end) ? from : to).focus(); return; }
      state.modified_from = start; state.modified_to = end; state.page = 1; run();
    };
    return form;
  }

  function dateFilterText() {
    const from = state.modified_from, to = state.modified_to;
    if (!from && !to) return "";
    const year = from.slice(0, 4);
    if (from === `${year}-01-01` && to === `${year}-12-31`) return year;
    return `${dayField(from) || "…"}${t("rangeSep")}${dayField(to) || "…"}`;
  }

  function pick(name, value) {
    if (name === "folder") state.prefix = value;
    else if (name === "year") { state.modified_from = value + "-01-01"; state.modified_to = value + "-12-31"; }
    else state[name] = value;
    state.page = 1;
    if (narrow.matches) $("filters-panel").open = false;  // on a phone the results come back into view
    run();
  }

  function renderFilters() {
    const active = [
      state.prefix && content("span", {textContent: state.prefix}),
      state.extension && content("span", {textContent: state.extension}),
      state.ocr_status && t("ocr_" + state.ocr_status),
      dateFilterText(),
    ].filter(Boolean);
    const p = $("filters");
    p.replaceChildren();
    $("filters-summary").textContent = active.length ? t("filtersActive", active.length) : t("filters");
    if (!active.length) return;
    p.append(t("within") + " ");
    active.forEach((part, i) => p.append(...(i ? [" · "] : []), part));
    p.append(" ", el("button", {type: "button", id: "clear", textContent: t("clear"), onclick: () => {
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
    $("lang").onclick = switchLanguage;
    // Results first on a phone: the filters wait behind their summary until asked for.
    $("filters-panel").open = !narrow.matches;
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
