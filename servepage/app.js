// The page of 'claude-iterate serve': the live runs, and one run followed
// through its event stream. Everything the runs and the agent wrote is put
// in the page with textContent, never as markup.
"use strict";

(function () {
  const token = document.querySelector('meta[name="ci-token"]').content;
  const readOnly = document.querySelector('meta[name="ci-read-only"]').content === "true";
  const $ = (id) => document.getElementById(id);
  const listPoll = 2000;

  let runs = [];
  let selected = null; // the id of the run shown
  let detail = null; // its last view
  let records = []; // its records
  let stream = null; // its EventSource
  let views = 0; // the views its stream brought
  let listTimer = null;

  if (readOnly) document.body.classList.add("read-only");

  // el makes an element with a class and a text.
  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  function stateWords(s) {
    return { waiting: "waiting for an answer", limit: "usage-limit wait" }[s] || s;
  }

  function duration(ms) {
    let s = Math.floor(ms / 1000);
    const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60);
    s = s % 60;
    if (h > 0) return h + "h" + String(m).padStart(2, "0") + "m";
    if (m > 0) return m + "m" + String(s).padStart(2, "0") + "s";
    return s + "s";
  }

  function cost(usd) {
    return "$" + Number(usd || 0).toFixed(usd >= 1 ? 2 : 4);
  }

  function iteration(v) {
    return v.iteration ? v.iteration + "/" + v.maxIterations : "-";
  }

  function progress(p) {
    return p ? p.completed + "/" + p.total : "-";
  }

  function baseName(p) {
    const parts = String(p || "").split("/").filter(Boolean);
    return parts.length ? parts[parts.length - 1] : p;
  }

  function setConn(text, bad) {
    const c = $("conn");
    c.textContent = text;
    c.classList.toggle("bad", !!bad);
  }

  // api calls the API; an action carries the token in its header.
  async function api(method, path, body) {
    const opts = { method, headers: { Authorization: "Bearer " + token }, credentials: "same-origin" };
    if (body !== undefined) {
      opts.headers["Content-Type"] = "application/json";
      opts.body = JSON.stringify(body);
    }
    const resp = await fetch(path, opts);
    let data = null;
    try { data = await resp.json(); } catch (e) { data = null; }
    if (!resp.ok) {
      const err = new Error((data && data.error) || resp.status + " " + resp.statusText);
      err.status = resp.status;
      throw err;
    }
    return data;
  }

  // The list.

  async function loadRuns() {
    try {
      runs = await api("GET", "/api/runs");
      setConn("live · " + new Date().toLocaleTimeString());
    } catch (e) {
      setConn("cannot reach serve: " + e.message, true);
    }
    drawList();
  }

  function drawList() {
    const ul = $("runs");
    ul.replaceChildren();
    $("count").textContent = runs.length ? "(" + runs.length + ")" : "";
    $("empty").hidden = runs.length > 0;
    for (const v of runs) {
      const li = el("li", v.state);
      li.dataset.id = v.id;
      li.tabIndex = 0;
      const row = el("div", "row1");
      row.append(el("span", "ws", v.workspace), el("span", "state " + v.state, stateWords(v.state)),
        el("span", "proj", v.projectName || baseName(v.project)),
        el("span", "nums", "iteration " + iteration(v) + " · " + duration(v.elapsedMs) + " · " + cost(v.costUsd) + " · progress " + progress(v.progress)));
      li.append(row, el("span", "now", v.question ? "asks: " + v.question : v.now));
      li.addEventListener("click", () => open(v.id, true));
      li.addEventListener("keydown", (ev) => { if (ev.key === "Enter") open(v.id, true); });
      ul.append(li);
    }
  }

  function pollList() {
    clearTimeout(listTimer);
    if (document.hidden) return; // idle while nobody looks
    loadRuns().finally(() => { listTimer = setTimeout(pollList, listPoll); });
  }

  // One run.

  function closeStream() {
    if (stream) stream.close();
    stream = null;
  }

  async function open(id, push) {
    if (push) window.history.pushState({ id }, "", "/runs/" + encodeURIComponent(id));
    selected = id;
    detail = null;
    closeStream();
    $("list-pane").hidden = true;
    $("detail").hidden = false;
    $("d-over").hidden = true;
    $("events").replaceChildren();
    $("message").textContent = "";
    $("d-title").textContent = id;
    try {
      const d = await api("GET", "/api/runs/" + encodeURIComponent(id));
      if (selected !== id) return;
      records = d.history || [];
      showDetail(d);
    } catch (e) {
      if (selected !== id) return;
      records = [];
      over(e.status === 404 ? "This run is over, or was never going on." : e.message);
      return;
    }
    follow(id);
  }

  function follow(id) {
    closeStream();
    const es = new EventSource("/api/runs/" + encodeURIComponent(id) + "/events");
    stream = es;
    es.onopen = () => { $("events").replaceChildren(); };
    es.onmessage = (m) => {
      let ev;
      try { ev = JSON.parse(m.data); } catch (e) { return; }
      addEvent(ev);
    };
    es.addEventListener("view", (m) => {
      views++;
      try { showDetail(JSON.parse(m.data)); } catch (e) { /* a bad frame is skipped */ }
    });
    es.addEventListener("end", () => {
      closeStream();
      over("This run is over.");
    });
    es.onerror = () => {
      if (stream === es && es.readyState === EventSource.CLOSED) over("The stream closed.");
    };
  }

  function over(text) {
    closeStream();
    $("d-over").textContent = text;
    $("d-over").hidden = false;
    $("question-box").hidden = true;
    for (const b of ["stop", "cancel-stop", "answer-send"]) $(b).disabled = true;
  }

  function showDetail(d) {
    detail = d;
    $("d-title").textContent = d.workspace;
    const st = $("d-state");
    st.textContent = stateWords(d.state);
    st.className = "state " + d.state;
    $("d-project").textContent = d.project;
    $("d-iteration").textContent = iteration(d);
    $("d-elapsed").textContent = duration(d.elapsedMs);
    $("d-cost").textContent = cost(d.costUsd);
    $("d-progress").textContent = progress(d.progress);
    $("d-now").textContent = d.now;
    const qb = $("question-box");
    if (d.question) {
      if ($("question").textContent !== d.question) $("answer-text").value = "";
      $("question").textContent = d.question;
      qb.hidden = false;
    } else {
      qb.hidden = true;
    }
    $("stop").hidden = !!d.stopRequested;
    $("cancel-stop").hidden = !d.stopRequested;
    for (const b of ["stop", "cancel-stop", "answer-send"]) $(b).disabled = false;
    $("lines").textContent = (d.lines || []).map((l) => l.text).join("\n");
    drawChart();
  }

  function addEvent(ev) {
    if (ev.event === "iteration" && ev.record) {
      const i = records.findIndex((r) => r.iteration === ev.record.iteration && r.startedAt === ev.record.startedAt);
      if (i < 0) records.push(ev.record);
      drawChart();
    }
    const ol = $("events");
    const li = el("li", "ev " + ev.event);
    li.dataset.event = ev.event;
    li.textContent = eventText(ev);
    ol.append(li);
    while (ol.children.length > 200) ol.firstChild.remove();
  }

  function eventText(ev) {
    const t = ev.time ? new Date(ev.time).toLocaleTimeString() + " " : "";
    switch (ev.event) {
      case "iteration": {
        const r = ev.record;
        return t + "iteration " + r.iteration + (ev.maxIterations ? "/" + ev.maxIterations : "") + " " + (r.ok ? "done" : r.end) +
          " in " + duration(r.durationMs) + ", " + cost(r.costUsd) + (r.reason ? ": " + r.reason : "");
      }
      case "question": return t + "the agent asks: " + ev.question;
      case "answered": return t + "answered: " + ev.answer;
      case "status_update": return t + "status: " + ev.message;
      default: return t + ev.event + (ev.message ? ": " + ev.message : "") + (ev.reason && !ev.message ? ": " + ev.reason : "");
    }
  }

  // drawChart draws the run's iterations: one bar per record, its height
  // the iteration's duration, red when it failed.
  function drawChart() {
    const box = $("chart");
    box.replaceChildren();
    if (!records.length) {
      box.append(el("p", "", "No iteration has ended yet."));
      return;
    }
    const ns = "http://www.w3.org/2000/svg";
    const svg = document.createElementNS(ns, "svg");
    const n = records.length, w = 100 / Math.max(n, 12); // thin bars while there are few
    const top = Math.max(...records.map((r) => r.durationMs || 0), 1);
    svg.setAttribute("viewBox", "0 0 100 100");
    svg.setAttribute("preserveAspectRatio", "none");
    records.forEach((r, i) => {
      const h = Math.max(2, 100 * (r.durationMs || 0) / top);
      const bar = document.createElementNS(ns, "rect");
      bar.setAttribute("x", String(i * w + w * 0.1));
      bar.setAttribute("width", String(w * 0.8));
      bar.setAttribute("y", String(100 - h));
      bar.setAttribute("height", String(h));
      bar.setAttribute("class", r.ok ? "ok" : "fail");
      const title = document.createElementNS(ns, "title");
      title.textContent = "iteration " + r.iteration + ": " + duration(r.durationMs) + ", " + cost(r.costUsd) + (r.ok ? "" : ", " + r.end);
      bar.append(title);
      svg.append(bar);
    });
    box.append(svg);
    const total = records.reduce((s, r) => s + (r.costUsd || 0), 0);
    box.append(el("p", "", n + " iteration" + (n === 1 ? "" : "s") + " · " + cost(total)));
  }

  // The actions.

  async function act(button, method, path, body, done) {
    const msg = $("message");
    button.disabled = true;
    msg.classList.remove("bad");
    try {
      await api(method, path, body);
      msg.textContent = done;
      const seen = views, es = stream;
      const d = await api("GET", "/api/runs/" + encodeURIComponent(selected));
      // Not over a view the stream brought meanwhile, nor once it ended:
      // that one is newer.
      if (stream !== es || !es || views !== seen) return;
      records = d.history || records;
      showDetail(d);
    } catch (e) {
      msg.textContent = e.message;
      msg.classList.add("bad");
    } finally {
      button.disabled = !stream; // over: no action any more
    }
  }

  $("stop").addEventListener("click", () =>
    act($("stop"), "POST", "/api/runs/" + encodeURIComponent(selected) + "/stop", undefined, "Stop requested: the run stops after its iteration."));
  $("cancel-stop").addEventListener("click", () =>
    act($("cancel-stop"), "DELETE", "/api/runs/" + encodeURIComponent(selected) + "/stop", undefined, "Stop cancelled."));
  $("answer-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const text = $("answer-text").value.trim();
    if (!text) {
      $("message").textContent = "Write an answer first.";
      return;
    }
    act($("answer-send"), "POST", "/api/runs/" + encodeURIComponent(selected) + "/answer", { answer: text }, "Answer sent: the run goes on with it.");
  });

  // Navigation: / is the list, /runs/ID a run.

  function route() {
    const m = location.pathname.match(/^\/runs\/([^/]+)$/);
    if (m) {
      open(decodeURIComponent(m[1]), false);
    } else {
      selected = null;
      closeStream();
      $("detail").hidden = true;
      $("list-pane").hidden = false;
    }
  }

  $("back").addEventListener("click", (ev) => {
    ev.preventDefault();
    window.history.pushState({}, "", "/");
    route();
  });
  window.addEventListener("popstate", route);
  document.addEventListener("visibilitychange", () => {
    if (!document.hidden) pollList();
  });

  route();
  pollList();
})();
