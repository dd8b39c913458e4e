// kibitz playground: play the served games against kibitz and watch it think.
//
// The page is a thin client of the public API and knows no engine internals: GET /games says
// which games exist, with their sizes and rules; POST /move plays, analyses (the heat map) and
// compares minimax with alpha-beta. The page keeps the position itself (board, side to move,
// history) and only checks what it must to run a game: legal clicks and the end of the game.
// Every answer is matched to the position it was asked for through an epoch counter, so an
// answer that arrives after New game, Undo or an edit is dropped, never played.
//
// Automation hooks (browser tests drive the page through them): [data-game] selects a game;
// board cells carry data-row / data-col and show only "X", "O" or nothing as their text
// (ghost numbers and heat values are drawn from attributes by CSS); the heat-map toggle has
// data-heatmap, and while it is on every legal empty cell carries data-score (the raw score of
// POST /move's analysis); body[data-busy] is "true" while a request is out, and the board
// carries data-to-move, data-analysis ("ready" once the heat map is drawn) and, once the game
// is over, data-result ("X", "O" or "draw").
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const PROVEN = 999872; // |score| beyond this is a proven result (openapi.yaml)
  const COMPARE_MAX_BUDGET_MS = 2000;

  const state = {
    games: new Map(), // name -> entry of GET /games
    game: null, // the entry being played
    rows: 3,
    cols: 3,
    rules: {},
    board: [], // rows of ".", "X", "O"
    toMove: "X",
    human: "X",
    history: [], // earlier {board, toMove, last} for Undo
    last: null, // last move played, {row, col}
    ghosts: [], // principal variation to draw: [{row, col, side, n}]
    suggestion: null, // "Best move" answer's cell
    analysis: null, // analysis entries for the current position
    heat: false,
    editing: false,
    result: null, // null, or {winner: "X"|"O"|null, cells}
    epoch: 0, // bumped whenever the position changes outside play, to drop stale answers
    busy: 0,
  };

  // ---- API -----------------------------------------------------------------------------

  class Problem extends Error {
    constructor(body, status) {
      super(body.title || `HTTP ${status}`);
      this.body = body;
      this.status = status;
    }
  }

  /// The body of a plain (non-stream) response as JSON; throws a Problem for an error status
  /// (a body that is not JSON becomes the problem's detail).
  async function readJson(response) {
    const text = await response.text();
    let json;
    try {
      json = JSON.parse(text);
    } catch (_) {
      json = { title: `HTTP ${response.status}`, detail: text.slice(0, 200) };
    }
    if (!response.ok) throw new Problem(json, response.status);
    return json;
  }

  async function call(path, body) {
    setBusy(+1);
    try {
      const init = body === undefined ? {} : {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      };
      return await readJson(await fetch(path, init));
    } catch (error) {
      if (error instanceof Problem) throw error;
      throw new Problem({ title: "The server cannot be reached", detail: String(error.message || error) }, 0);
    } finally {
      setBusy(-1);
    }
  }

  /// POSTs `body` asking for Server-Sent Events: calls `onIteration` with each `iteration`
  /// event's data as it arrives (read with a stream reader, so the search shows while it runs)
  /// and resolves to the `answer` event's data, the same body a plain JSON call returns.
  /// Refusals come before the stream, as problem+json, and throw a Problem as `call` does.
  async function callStream(path, body, onIteration) {
    setBusy(+1);
    try {
      const response = await fetch(path, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "text/event-stream" },
        body: JSON.stringify(body),
      });
      if (!response.ok || !(response.headers.get("content-type") || "").startsWith("text/event-stream")) {
        return await readJson(response);
      }
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true }).replace(/\r\n/g, "\n");
        let end;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          let name = "message";
          const data = [];
          for (const line of block.split("\n")) {
            if (line.startsWith("event:")) name = line.slice(6).trim();
            else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
          }
          if (!data.length) continue; // a keep-alive comment
          const json = JSON.parse(data.join("\n"));
          if (name === "iteration") onIteration(json);
          else if (name === "answer") return json;
          else if (name === "error") throw new Problem(json, json.status || 500);
        }
      }
      throw new Problem({ title: "The answer stream ended early" }, 0);
    } catch (error) {
      if (error instanceof Problem) throw error;
      throw new Problem({ title: "The server cannot be reached", detail: String(error.message || error) }, 0);
    } finally {
      setBusy(-1);
    }
  }

  function setBusy(delta) {
    state.busy += delta;
    document.body.dataset.busy = state.busy > 0 ? "true" : "false";
  }

  /// A problem+json answer in plain words: what went wrong, and each field at fault.
  function problemText(problem) {
    const b = problem.body || {};
    const lines = [b.detail ? `${b.title}: ${b.detail}` : b.title || problem.message];
    for (const e of b.errors || []) {
      if (e.message && !(b.detail || "").includes(e.message)) lines.push(`${e.pointer || ""} ${e.message}`.trim());
    }
    if (problem.status === 503) lines.push("The server is busy; try again in a moment.");
    return lines.join("\n");
  }

  function showProblem(element, problem) {
    if (!problem) {
      element.hidden = true;
      element.textContent = "";
      return;
    }
    element.hidden = false;
    element.textContent = problemText(problem);
  }

  // ---- Rules the page needs to run a game ---------------------------------------------

  const gravity = () => state.game.board.gravity;

  function winLength() {
    if (state.game.name === "tictactoe") return 3;
    if (state.game.name === "connect4") return 4;
    return Number(state.rules.win_length || 5);
  }

  function countSides(board) {
    let x = 0;
    let o = 0;
    for (const row of board) for (const c of row) {
      if (c === "X") x++;
      else if (c === "O") o++;
    }
    return { x, o };
  }

  function defaultToMove(board) {
    const { x, o } = countSides(board);
    return x === o ? "X" : "O";
  }

  /// The cell a disc dropped into `col` lands on (Connect-4), or null when the column is full.
  function landing(col) {
    for (let r = state.rows - 1; r >= 0; r--) if (state.board[r][col] === ".") return r;
    return null;
  }

  /// The cell a click on (row, col) plays, or null when it is not a legal move.
  function moveFor(row, col) {
    if (gravity()) {
      const r = landing(col);
      return r === null ? null : { row: r, col };
    }
    return state.board[row][col] === "." ? { row, col } : null;
  }

  function isLegal(row, col) {
    if (state.board[row][col] !== ".") return false;
    return !gravity() || landing(col) === row;
  }

  /// A finished game: the winner and its line, or a full board (a draw); null while it goes on.
  function outcome(board) {
    const k = winLength();
    const exact = state.rules.overline === "no_win";
    const dirs = [[0, 1], [1, 0], [1, 1], [1, -1]];
    for (let r = 0; r < state.rows; r++) {
      for (let c = 0; c < state.cols; c++) {
        const side = board[r][c];
        if (side === ".") continue;
        for (const [dr, dc] of dirs) {
          // Only count from the start of a run.
          const pr = r - dr;
          const pc = c - dc;
          if (pr >= 0 && pr < state.rows && pc >= 0 && pc < state.cols && board[pr][pc] === side) continue;
          const cells = [];
          let rr = r;
          let cc = c;
          while (rr >= 0 && rr < state.rows && cc >= 0 && cc < state.cols && board[rr][cc] === side) {
            cells.push({ row: rr, col: cc });
            rr += dr;
            cc += dc;
          }
          if (exact ? cells.length === k : cells.length >= k) return { winner: side, cells };
        }
      }
    }
    for (const row of board) if (row.includes(".")) return null;
    return { winner: null, cells: [] };
  }

  // ---- Requests for the current position -----------------------------------------------

  function budget() {
    const max = state.game.limits.max_budget_ms;
    const v = Math.round(Number($("budget").value));
    return Math.min(Math.max(Number.isFinite(v) && v > 0 ? v : state.game.limits.default_budget_ms, 1), max);
  }

  function requestBody(extra) {
    const body = {
      game: state.game.name,
      board: state.board.map((row) => row.join("")),
      to_move: state.toMove,
      budget_ms: budget(),
    };
    if (state.game.rules.length > 0) body.rules = { ...state.rules };
    return Object.assign(body, extra);
  }

  function shellQuote(text) {
    return `'${text.replace(/'/g, `'\\''`)}'`;
  }

  function updateRequestPanel() {
    if (!state.game) return;
    const body = requestBody(state.heat ? { analysis: true } : {});
    const json = JSON.stringify(body);
    $("request-curl").textContent =
      `curl -s ${location.origin}/move -H 'content-type: application/json' \\\n  -d ${shellQuote(json)}`;
    $("request-json").textContent = JSON.stringify(body, null, 2);
  }

  async function copy(text, what) {
    const note = $("copied");
    try {
      await navigator.clipboard.writeText(text);
      note.textContent = `${what} copied.`;
    } catch (_) {
      note.textContent = `Select the ${what} below and copy it.`;
    }
  }

  // ---- Playing ----------------------------------------------------------------------------

  const engineSide = () => (state.human === "X" ? "O" : "X");
  const other = (side) => (side === "X" ? "O" : "X");

  function emptyBoard() {
    return Array.from({ length: state.rows }, () => Array(state.cols).fill("."));
  }

  function positionChanged() {
    state.epoch++;
    state.analysis = null;
    state.suggestion = null;
  }

  function newGame() {
    readSetup();
    positionChanged();
    state.board = emptyBoard();
    state.toMove = "X";
    state.history = [];
    state.last = null;
    state.ghosts = [];
    state.result = null;
    showProblem($("problem"), null);
    buildBoard();
    clearReport();
    continuePlay();
  }

  function play(move) {
    state.history.push({ board: state.board.map((r) => r.slice()), toMove: state.toMove, last: state.last });
    state.board[move.row][move.col] = state.toMove;
    state.toMove = other(state.toMove);
    state.last = move;
    state.analysis = null;
    state.suggestion = null;
    state.result = outcome(state.board);
  }

  /// After any change: the engine moves if it is its turn, else the heat map is refreshed.
  function continuePlay() {
    render();
    updateRequestPanel();
    if (state.result || state.editing) {
      if (state.editing && state.heat) analyse();
      return;
    }
    if (state.toMove === engineSide()) {
      engineMove();
    } else if (state.heat) {
      analyse();
    }
  }

  async function engineMove() {
    const epoch = state.epoch;
    setStatus(`kibitz (${state.toMove}) is thinking… (budget ${budget()} ms)`);
    const live = $("live");
    live.replaceChildren();
    live.hidden = false;
    $("live-title").hidden = false;
    try {
      const report = await callStream("/move", requestBody({}), (it) => {
        if (epoch !== state.epoch) return;
        // One line per completed depth, as the engine reports it.
        const item = document.createElement("li");
        item.dataset.depth = it.depth;
        item.textContent = `depth ${it.depth}: ${cellName(it.move)} ${formatScore(it.score)}, ` +
          `${it.nodes.toLocaleString("en")} nodes, ${it.elapsed_ms} ms`;
        live.append(item);
        setStatus(`kibitz (${state.toMove}) is thinking… depth ${it.depth}, best so far ${cellName(it.move)}`);
      });
      if (epoch !== state.epoch) return;
      showProblem($("problem"), null);
      play(report.move);
      showReport(report, "kibitz");
      state.ghosts = ghostsOf(report.pv.slice(1), other(report.to_move));
      continuePlay();
    } catch (problem) {
      if (epoch !== state.epoch) return;
      showProblem($("problem"), problem);
      setStatus("kibitz could not move: see the message above. Undo, edit or start a new game.");
    }
  }

  async function analyse() {
    const epoch = state.epoch;
    const moves = state.board.length;
    if (!moves || outcome(state.board)) return;
    setStatus(state.editing ? "Analysing every move…" : `Your move (${state.toMove}); analysing every move…`);
    try {
      const report = await call("/move", requestBody({ analysis: true }));
      if (epoch !== state.epoch || state.analysis) return;
      showProblem($("problem"), null);
      state.analysis = report.analysis || [];
      state.ghosts = ghostsOf(report.pv, report.to_move);
      showReport(report, state.toMove === state.human && !state.editing ? "you" : null);
      render();
    } catch (problem) {
      if (epoch !== state.epoch) return;
      showProblem($("problem"), problem);
      render();
    }
  }

  async function hint() {
    if (outcome(state.board)) return;
    const epoch = state.epoch;
    setStatus(`Searching the best move for ${state.toMove}…`);
    try {
      const report = await call("/move", requestBody({}));
      if (epoch !== state.epoch) return;
      showProblem($("problem"), null);
      showReport(report, null);
      state.suggestion = report.move;
      state.ghosts = ghostsOf(report.pv, report.to_move);
      render();
      setStatus(`Best move for ${report.to_move}: ${cellName(report.move)} (${verdict(report, report.to_move)}).`);
    } catch (problem) {
      if (epoch !== state.epoch) return;
      showProblem($("problem"), problem);
      render();
    }
  }

  function undo() {
    if (state.history.length === 0) return;
    positionChanged();
    // Back to the last position where it was the human's turn.
    let entry;
    do {
      entry = state.history.pop();
    } while (state.history.length > 0 && entry.toMove !== state.human);
    state.board = entry.board;
    state.toMove = entry.toMove;
    state.last = entry.last;
    state.ghosts = [];
    state.result = outcome(state.board);
    showProblem($("problem"), null);
    continuePlay();
  }

  function toggleEdit() {
    state.editing = !state.editing;
    positionChanged();
    $("edit").setAttribute("aria-pressed", String(state.editing));
    $("edit-side-label").hidden = !state.editing;
    if (state.editing) {
      $("edit-side").value = "";
      state.ghosts = [];
      state.result = null;
      render();
      updateRequestPanel();
      if (state.heat) analyse();
      return;
    }
    // Leaving edit mode: play on from the position set up.
    state.toMove = $("edit-side").value || defaultToMove(state.board);
    state.history = [];
    state.last = null;
    state.result = outcome(state.board);
    continuePlay();
  }

  function editCell(row, col) {
    const next = { ".": "X", X: "O", O: "." };
    state.board[row][col] = next[state.board[row][col]];
    positionChanged();
    state.toMove = $("edit-side").value || defaultToMove(state.board);
    state.ghosts = [];
    render();
    updateRequestPanel();
    if (state.heat) analyse();
  }

  function activate(row, col) {
    if (state.editing) {
      editCell(row, col);
      return;
    }
    if (state.result || state.busy > 0 && state.toMove !== state.human) return;
    if (state.toMove !== state.human) return;
    const move = moveFor(row, col);
    if (!move) {
      setStatus(gravity() ? "That column is full." : "That cell is taken.");
      return;
    }
    positionChanged();
    state.ghosts = [];
    play(move);
    continuePlay();
  }

  // ---- Drawing the board ------------------------------------------------------------------

  const columnName = (c) => (c < 26 ? String.fromCharCode(97 + c) : `z${c - 25}`);
  const cellName = (m) => `${columnName(m.col)}${m.row + 1}`;
  const plies = (n) => `${n} ${n === 1 ? "ply" : "plies"}`;

  function buildBoard() {
    const board = $("board");
    board.textContent = "";
    board.style.setProperty("--cols", state.cols);
    board.style.setProperty("--rows", state.rows);
    board.dataset.game = state.game.name;
    board.setAttribute("aria-label", `Board, ${state.rows} rows by ${state.cols} columns; arrow keys move, Enter plays`);
    for (let r = 0; r < state.rows; r++) {
      for (let c = 0; c < state.cols; c++) {
        const cell = document.createElement("button");
        cell.type = "button";
        cell.className = "cell";
        cell.dataset.row = r;
        cell.dataset.col = c;
        cell.tabIndex = r === 0 && c === 0 ? 0 : -1;
        board.appendChild(cell);
      }
    }
    const scores = $("column-scores");
    scores.textContent = "";
    scores.hidden = !gravity();
    scores.style.setProperty("--cols", state.cols);
    for (let c = 0; gravity() && c < state.cols; c++) {
      const s = document.createElement("span");
      s.dataset.col = c;
      scores.appendChild(s);
    }
  }

  function heatLabel(entry) {
    if (entry.outcome === "win") return `W${entry.plies_to_end}`;
    if (entry.outcome === "loss") return `L${entry.plies_to_end}`;
    if (entry.outcome === "draw") return "=";
    return formatScore(entry.score);
  }

  function heatWords(entry) {
    if (entry.outcome === "win") return `wins in ${plies(entry.plies_to_end)}`;
    if (entry.outcome === "loss") return `loses in ${plies(entry.plies_to_end)}`;
    if (entry.outcome === "draw") return "draw";
    return `${formatScore(entry.score)} (heuristic)`;
  }

  /// Colour of an unproven score: blue for good, orange for bad (a scale colour-blind readers
  /// tell apart), stronger the further from even. Heuristic scales differ between games, so
  /// the strength is relative to the largest unproven score of the position (`spread`).
  function heatColour(score, spread) {
    const t = Math.max(-1, Math.min(1, score / Math.max(spread, 50)));
    // Opaque (blended over white by hand), so no board colour shows through.
    const a = 0.12 + 0.68 * Math.abs(t);
    const [r, g, b] = t >= 0 ? [0, 114, 178] : [230, 159, 0];
    const mix = (c) => Math.round(255 + (c - 255) * a);
    return `rgb(${mix(r)}, ${mix(g)}, ${mix(b)})`;
  }

  function render() {
    const board = $("board");
    const byCell = new Map();
    if (state.heat && state.analysis) {
      for (const entry of state.analysis) byCell.set(`${entry.move.row},${entry.move.col}`, entry);
    }
    const best = state.heat && state.analysis && state.analysis.length ? state.analysis[0] : null;
    const spread = Math.max(0, ...(state.analysis || []).filter((e) => !e.outcome).map((e) => Math.abs(e.score)));
    const ghosts = new Map(state.ghosts.map((g) => [`${g.row},${g.col}`, g]));
    const winCells = new Set((state.result ? state.result.cells : []).map((m) => `${m.row},${m.col}`));
    for (const cell of board.children) {
      const r = Number(cell.dataset.row);
      const c = Number(cell.dataset.col);
      const key = `${r},${c}`;
      const side = state.board[r][c];
      cell.textContent = side === "." ? "" : side;
      cell.className = "cell";
      if (side !== ".") cell.classList.add(`side-${side}`);
      const legal = !state.result && isLegal(r, c);
      let words = side === "." ? (legal ? "empty" : "empty, not playable yet") : side;
      const entry = byCell.get(key);
      if (entry && side === ".") {
        cell.dataset.score = entry.score;
        cell.dataset.label = heatLabel(entry);
        cell.classList.add("heat", `heat-${entry.outcome || "eval"}`);
        cell.style.setProperty("--heat", entry.outcome ? "" : heatColour(entry.score, spread));
        cell.title = `${cellName({ row: r, col: c })}: ${heatWords(entry)} for ${state.toMove}`;
        words += `, ${heatWords(entry)}`;
        if (best && best.move.row === r && best.move.col === c) cell.classList.add("best");
      } else {
        delete cell.dataset.score;
        delete cell.dataset.label;
        cell.style.removeProperty("--heat");
        cell.removeAttribute("title");
      }
      const ghost = ghosts.get(key);
      if (ghost && side === ".") {
        cell.dataset.ghost = ghost.n;
        cell.classList.add("ghost", `ghost-${ghost.side}`);
        words += `, best line move ${ghost.n} (${ghost.side})`;
      } else {
        delete cell.dataset.ghost;
      }
      if (state.last && state.last.row === r && state.last.col === c) cell.classList.add("last");
      if (state.suggestion && state.suggestion.row === r && state.suggestion.col === c) cell.classList.add("suggested");
      if (winCells.has(key)) cell.classList.add("won");
      cell.setAttribute("aria-label", `${cellName({ row: r, col: c })}: ${words}`);
    }
    if (gravity()) {
      for (const span of $("column-scores").children) {
        const col = Number(span.dataset.col);
        const row = landing(col);
        const entry = row === null ? null : byCell.get(`${row},${col}`);
        span.textContent = entry ? heatLabel(entry) : "";
        span.className = entry ? `heat-${entry.outcome || "eval"}` : "";
        span.style.setProperty("--heat", entry && !entry.outcome ? heatColour(entry.score, spread) : "");
        if (entry) span.title = heatWords(entry);
      }
    }
    board.dataset.analysis = state.heat && state.analysis ? "ready" : "none";
    board.dataset.toMove = state.toMove;
    board.classList.toggle("editing", state.editing);
    $("legend").hidden = !state.heat;
    $("heatmap").setAttribute("aria-pressed", String(state.heat));
    renderStatus();
  }

  function renderStatus() {
    const board = $("board");
    if (state.result) {
      const w = state.result.winner;
      board.dataset.result = w || "draw";
      if (!w) setStatus("Game over: a draw.");
      else setStatus(w === state.human ? `Game over: you win (${w}).` : `Game over: kibitz wins (${w}).`);
      return;
    }
    delete board.dataset.result;
    if (state.editing) {
      setStatus(`Edit mode: click a cell to cycle empty → X → O. ${state.toMove} to move. Press Best move to ask, or Edit position again to play on.`);
    } else if (state.toMove === state.human && state.busy === 0) {
      setStatus(`Your move (${state.human}).`);
    }
  }

  function setStatus(text) {
    $("status").textContent = text;
  }

  function ghostsOf(pv, firstSide) {
    let side = firstSide;
    return pv.map((m, i) => {
      const g = { row: m.row, col: m.col, side, n: i + 1 };
      side = other(side);
      return g;
    });
  }

  // ---- The search report --------------------------------------------------------------

  function formatScore(score) {
    if (Math.abs(score) > PROVEN) return score > 0 ? "win" : "loss";
    const v = (Math.abs(score) / 100).toFixed(1);
    if (v === "0.0") return "0.0";
    return `${score >= 0 ? "+" : "−"}${v}`;
  }

  function verdict(report, who) {
    if (report.outcome === "win") return `${who} wins in ${plies(report.plies_to_end)}`;
    if (report.outcome === "loss") return `${who} loses in ${plies(report.plies_to_end)} with best play`;
    if (report.outcome === "draw") return "draw with best play";
    return `${formatScore(report.score)} for ${who} (heuristic, not proven)`;
  }

  function clearReport() {
    $("report-empty").hidden = false;
    $("report-fields").hidden = true;
  }

  function showReport(report, whoName) {
    const who = whoName === "kibitz" ? `kibitz (${report.to_move})` : whoName === "you" ? `you (${report.to_move})` : report.to_move;
    $("report-empty").hidden = true;
    $("report-fields").hidden = false;
    $("r-verdict").textContent = verdict(report, who);
    $("r-move").textContent = cellName(report.move) + (report.cached ? " (from the answer cache)" : "");
    $("r-depth").textContent = report.depth;
    $("r-nodes").textContent = report.nodes.toLocaleString("en");
    $("r-nps").textContent = report.nps.toLocaleString("en");
    $("r-elapsed").textContent = `${report.elapsed_ms} ms`;
    $("r-stop").textContent = {
      proven: "proof (exact result)",
      depth: "depth limit",
      nodes: "node limit",
      time: "time budget",
      cancelled: "cancellation",
    }[report.stop_reason] || report.stop_reason;
    $("r-pv").textContent = report.pv.map(cellName).join(" ");
  }

  // ---- Minimax against alpha-beta -------------------------------------------------------

  async function compare() {
    const chart = $("compare-chart");
    if (outcome(state.board)) {
      chart.textContent = "The game is over: there is nothing to search.";
      return;
    }
    const epoch = state.epoch;
    const base = requestBody({});
    base.budget_ms = Math.min(base.budget_ms, COMPARE_MAX_BUDGET_MS);
    chart.textContent = `Searching with minimax, then alpha-beta (${base.budget_ms} ms each)…`;
    try {
      const minimax = await call("/move", { ...base, algorithm: "minimax" });
      const alphabeta = await call("/move", { ...base, algorithm: "alphabeta" });
      if (epoch !== state.epoch) return;
      drawComparison(minimax, alphabeta);
    } catch (problem) {
      chart.textContent = problemText(problem);
    }
  }

  const SVG = "http://www.w3.org/2000/svg";

  function svgElement(name, attributes, text) {
    const el = document.createElementNS(SVG, name);
    for (const [k, v] of Object.entries(attributes)) el.setAttribute(k, v);
    if (text !== undefined) el.textContent = text;
    return el;
  }

  function drawComparison(minimax, alphabeta) {
    const rows = new Map();
    for (const it of minimax.iterations) rows.set(it.depth, { depth: it.depth, mm: it.nodes });
    for (const it of alphabeta.iterations) {
      const row = rows.get(it.depth) || { depth: it.depth };
      row.ab = it.nodes;
      rows.set(it.depth, row);
    }
    const data = [...rows.values()].sort((a, b) => a.depth - b.depth);
    const chart = $("compare-chart");
    chart.textContent = "";
    const maxNodes = Math.max(10, ...data.flatMap((d) => [d.mm || 1, d.ab || 1]));
    const top = Math.ceil(Math.log10(maxNodes));
    const width = 360;
    const height = 200;
    const left = 44;
    const bottom = 28;
    const plotH = height - bottom - 10;
    const group = (width - left - 8) / Math.max(data.length, 1);
    const bar = Math.min(18, group / 2.5);
    const y = (n) => 10 + plotH - (Math.log10(Math.max(n, 1)) / top) * plotH;
    const svg = svgElement("svg", {
      viewBox: `0 0 ${width} ${height}`,
      role: "img",
      "aria-label": "Nodes per depth: minimax against alpha-beta, log scale",
      class: "compare-svg",
    });
    for (let p = 0; p <= top; p++) {
      const yy = y(10 ** p);
      svg.appendChild(svgElement("line", { x1: left, x2: width - 4, y1: yy, y2: yy, class: "grid" }));
      svg.appendChild(svgElement("text", { x: left - 4, y: yy + 4, class: "axis", "text-anchor": "end" }, p === 0 ? "1" : `1e${p}`));
    }
    data.forEach((d, i) => {
      const x0 = left + i * group + group / 2;
      for (const [key, cls, dx] of [["mm", "minimax", -bar], ["ab", "alphabeta", 0]]) {
        if (d[key] === undefined) continue;
        const yy = y(d[key]);
        const rect = svgElement("rect", { x: x0 + dx, y: yy, width: bar - 1, height: 10 + plotH - yy, class: cls });
        rect.appendChild(svgElement("title", {}, `depth ${d.depth}, ${cls}: ${d[key].toLocaleString("en")} nodes`));
        svg.appendChild(rect);
      }
      svg.appendChild(svgElement("text", { x: x0, y: height - 12, class: "axis", "text-anchor": "middle" }, d.depth));
    });
    svg.appendChild(svgElement("text", { x: left + (width - left) / 2, y: height - 1, class: "axis", "text-anchor": "middle" }, "depth"));
    chart.appendChild(svg);
    const legend = document.createElement("p");
    legend.className = "legend";
    legend.innerHTML = '<span class="swatch minimax"></span> minimax <span class="swatch alphabeta"></span> alpha-beta (with its table)';
    const totals = document.createElement("p");
    totals.className = "hint";
    const note = (r) => `${r.nodes.toLocaleString("en")} nodes to depth ${r.depth} in ${r.elapsed_ms} ms${r.cached ? ", cached answer" : ""}`;
    totals.textContent = `minimax: ${note(minimax)}; alpha-beta: ${note(alphabeta)}.`;
    chart.append(legend, totals);
    const body = $("compare-table").querySelector("tbody");
    body.textContent = "";
    for (const d of data) {
      const tr = document.createElement("tr");
      const ratio = d.mm && d.ab ? `${(d.mm / d.ab).toFixed(1)}×` : "—";
      for (const v of [d.depth, d.mm ? d.mm.toLocaleString("en") : "—", d.ab ? d.ab.toLocaleString("en") : "—", ratio]) {
        const td = document.createElement("td");
        td.textContent = v;
        tr.appendChild(td);
      }
      body.appendChild(tr);
    }
    $("compare-table").hidden = false;
  }

  // ---- Settings and game selection -------------------------------------------------------

  function readSetup() {
    const info = state.game.board;
    const clamp = (v, lo, hi, d) => {
      const n = Math.round(Number(v));
      return Number.isFinite(n) ? Math.min(Math.max(n, lo), hi) : d;
    };
    state.rows = clamp($("rows").value, info.min_rows, info.max_rows, info.default_rows);
    state.cols = clamp($("cols").value, info.min_cols, info.max_cols, info.default_cols);
    $("rows").value = state.rows;
    $("cols").value = state.cols;
    state.human = $("human").value;
    state.rules = {};
    for (const rule of state.game.rules) {
      const input = $(`rule-${rule.name}`);
      state.rules[rule.name] = typeof rule.default === "number" ? Number(input.value) : input.value;
    }
  }

  function buildSetup() {
    const info = state.game.board;
    for (const [id, lo, hi, d] of [["rows", info.min_rows, info.max_rows, info.default_rows], ["cols", info.min_cols, info.max_cols, info.default_cols]]) {
      const input = $(id);
      input.min = lo;
      input.max = hi;
      input.value = d;
      input.disabled = lo === hi;
    }
    const rules = $("rules");
    rules.textContent = "";
    for (const rule of state.game.rules) {
      const label = document.createElement("label");
      label.title = rule.description;
      label.append(rule.name.replace(/_/g, " ") + " ");
      let input;
      if (rule.values) {
        input = document.createElement("select");
        for (const v of rule.values) {
          const option = document.createElement("option");
          option.value = v;
          option.textContent = v === "win" ? "win (free-style)" : v === "no_win" ? "no win (standard)" : v;
          input.appendChild(option);
        }
      } else {
        input = document.createElement("input");
        input.type = "number";
        input.min = 3;
        input.inputMode = "numeric";
      }
      input.id = `rule-${rule.name}`;
      input.value = rule.default;
      label.appendChild(input);
      rules.appendChild(label);
    }
    const budgetInput = $("budget");
    budgetInput.max = state.game.limits.max_budget_ms;
  }

  function selectGame(name) {
    for (const b of document.querySelectorAll("[data-game]")) b.setAttribute("aria-pressed", String(b.dataset.game === name));
    const isTree = name === "tree";
    $("game-view").hidden = isTree;
    $("tree-view").hidden = !isTree;
    if (location.hash !== `#${name}`) history.replaceState(null, "", `#${name}`);
    if (isTree) {
      positionChanged();
      if (window.kibitzTree) window.kibitzTree.show();
      return;
    }
    state.game = state.games.get(name);
    if (state.editing) toggleEditOff();
    buildSetup();
    $("compare-chart").textContent = "";
    $("compare-table").hidden = true;
    newGame();
  }

  function toggleEditOff() {
    state.editing = false;
    $("edit").setAttribute("aria-pressed", "false");
    $("edit-side-label").hidden = true;
  }

  // ---- Keyboard -------------------------------------------------------------------------

  function onBoardKey(event) {
    const cell = event.target.closest(".cell");
    if (!cell) return;
    const steps = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1], Home: [0, -999], End: [0, 999] };
    const step = steps[event.key];
    if (!step) return;
    event.preventDefault();
    const r = Math.min(Math.max(Number(cell.dataset.row) + step[0], 0), state.rows - 1);
    const c = Math.min(Math.max(Number(cell.dataset.col) + step[1], 0), state.cols - 1);
    const next = $("board").querySelector(`[data-row="${r}"][data-col="${c}"]`);
    cell.tabIndex = -1;
    next.tabIndex = 0;
    next.focus();
  }

  // ---- Start --------------------------------------------------------------------------------

  async function start() {
    document.body.dataset.busy = "false";
    $("board").addEventListener("click", (event) => {
      const cell = event.target.closest(".cell");
      if (cell) activate(Number(cell.dataset.row), Number(cell.dataset.col));
    });
    $("board").addEventListener("keydown", onBoardKey);
    $("new-game").addEventListener("click", () => {
      if (state.editing) toggleEditOff();
      newGame();
    });
    $("undo").addEventListener("click", undo);
    $("hint").addEventListener("click", hint);
    $("edit").addEventListener("click", toggleEdit);
    $("edit-side").addEventListener("change", () => {
      positionChanged();
      state.toMove = $("edit-side").value || defaultToMove(state.board);
      render();
      updateRequestPanel();
      if (state.heat) analyse();
    });
    $("heatmap").addEventListener("click", () => {
      state.heat = !state.heat;
      render();
      updateRequestPanel();
      if (state.heat && !state.analysis && (state.editing || (!state.result && state.toMove === state.human))) analyse();
    });
    $("compare-run").addEventListener("click", compare);
    $("copy-curl").addEventListener("click", () => copy($("request-curl").textContent, "curl command"));
    $("copy-json").addEventListener("click", () => {
      $("request-json").hidden = false;
      copy($("request-json").textContent, "JSON body");
    });
    $("setup").addEventListener("change", () => newGame());
    $("setup").addEventListener("submit", (event) => event.preventDefault());
    $("budget").addEventListener("change", (event) => {
      event.stopPropagation();
      updateRequestPanel();
    });
    $("human").addEventListener("change", (event) => {
      event.stopPropagation();
      state.human = $("human").value;
      positionChanged();
      continuePlay();
    });
    for (const b of document.querySelectorAll("[data-game]")) b.addEventListener("click", () => selectGame(b.dataset.game));

    try {
      const catalogue = await call("/games");
      const nav = $("games");
      const treeButton = nav.querySelector('[data-game="tree"]');
      for (const entry of catalogue.games) {
        state.games.set(entry.name, entry);
        const button = document.createElement("button");
        button.type = "button";
        button.dataset.game = entry.name;
        button.title = entry.description;
        button.setAttribute("aria-pressed", "false");
        button.textContent = { tictactoe: "Tic-tac-toe", connect4: "Connect-4", gomoku: "Gomoku" }[entry.name] || entry.name;
        button.addEventListener("click", () => selectGame(entry.name));
        nav.insertBefore(button, treeButton);
      }
    } catch (problem) {
      showProblem($("problem"), problem);
      $("game-view").hidden = false;
      return;
    }
    const wanted = location.hash.slice(1);
    const first = state.games.has(wanted) || wanted === "tree" ? wanted : state.games.keys().next().value;
    selectGame(first);
  }

  document.addEventListener("DOMContentLoaded", start);
})();
