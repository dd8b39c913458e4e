// kibitz playground: play the served games against kibitz and watch it think.
//
// The page is a thin client of the public API and knows no engine internals: GET /games says
// which games exist, with their sizes, rules and what each strength level means; POST /move
// plays (at the level chosen), analyses (the heat map) and compares minimax with alpha-beta;
// POST /review judges the game played, ply by ply. The page keeps the position itself (board,
// side to move, history) and only checks what it must to run a game: legal clicks and the end
// of the game.
// Every answer is matched to the position it was asked for through an epoch counter, so an
// answer that arrives after New game, Undo or an edit is dropped, never played.
//
// Cells are named as players read them: columns a, b, c ... left to right, rows numbered from
// the bottom (a1 is the bottom-left cell), on the board's edges, in the report, the labels and
// the review alike. The API's {row, col} stay 0-based from the top; only the names differ.
//
// Automation hooks (browser tests drive the page through them): [data-game] selects a game;
// board cells carry data-row / data-col and show only "X", "O" or nothing as their text
// (ghost numbers and heat values are drawn from attributes by CSS); the heat-map toggle has
// data-heatmap, and while it is on every legal empty cell carries data-score (the raw score of
// POST /move's analysis); body[data-busy] is "true" while a request is out, and the board
// carries data-to-move, data-analysis ("ready" once the heat map is drawn) and, once the game
// is over, data-result ("X", "O" or "draw"). The edge labels carry data-coord (their text);
// the level control is [data-level]; [data-review] starts a review, whose plies carry
// data-ply (1-based), data-cell ("ROW,COL" of the move played), data-mark (the API's mark)
// and, on the first outcome change, data-first-change; #review[data-state] is "running",
// "done" or "failed"; while a ply is shown on the board its
// best and played cells carry data-review-move ("best", "played" or "best played"). The API
// key field is [data-api-key] (#api-key); a 401 marks #problem with data-problem="unauthorized".
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
    history: [], // earlier {board, toMove, last} for Undo, one per move of `moves`
    start: null, // {board, toMove} the moves were played from (the empty board, or an edit)
    moves: [], // the moves played since `start`, for the review
    last: null, // last move played, {row, col}
    ghosts: [], // principal variation to draw: [{row, col, side, n}]
    suggestion: null, // "Best move" answer's cell
    analysis: null, // analysis entries for the current position
    analysisMove: null, // the move the analysis' own report chose: the heat map's best cell
    heat: false,
    editing: false,
    result: null, // null, or {winner: "X"|"O"|null, cells}
    epoch: 0, // bumped whenever the position changes outside play, to drop stale answers
    busy: 0,
    settingsError: false, // a setting out of the API's limits is shown; nothing is asked
  };

  // The last review: what was reviewed, the plies judged so far, the ply shown on the board.
  const review = { token: 0, game: null, rows: 0, cols: 0, start: null, moves: [], plies: [], first: null, shown: null };

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

  // The API key, for a server configured with keys: kept in this tab's sessionStorage (gone
  // when the tab closes; never in the URL, so never in a history, a log or a Referer) and sent
  // as `Authorization: Bearer` on every call the page makes, streamed ones included (they are
  // fetch streams, which can send headers; an EventSource could not).
  const KEY_STORAGE = "kibitz.apiKey";

  function apiKey() {
    try {
      return sessionStorage.getItem(KEY_STORAGE) || "";
    } catch (_) {
      return ""; // storage refused (a privacy setting): no key
    }
  }

  /// `headers` with the API key's `Authorization`, when one is set.
  function withKey(headers = {}) {
    const key = apiKey();
    return key ? { ...headers, authorization: `Bearer ${key}` } : headers;
  }
  // tree.js calls the API too.
  window.kibitzApi = { withKey, keyProblem };

  /// The words for a 401: the server wants a key, or not the one given.
  function keyProblem(status) {
    if (status !== 401) return null;
    return apiKey()
      ? "The API key in the field at the top of the page is not one of this server's: correct it."
      : "This server needs an API key: enter yours in the API key field at the top of the page.";
  }

  async function call(path, body) {
    setBusy(+1);
    try {
      const init = body === undefined ? { headers: withKey() } : {
        method: "POST",
        headers: withKey({ "content-type": "application/json" }),
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

  /// POSTs `body` asking for Server-Sent Events: calls `onEvent(name, data)` with each event's
  /// data as it arrives (read with a stream reader, so the search shows while it runs) and
  /// resolves to the `last` event's data (`answer` of /move, `review` of /review), the same
  /// body a plain JSON call returns. Refusals come before the stream, as problem+json, and throw
  /// a Problem as `call` does.
  async function callStream(path, body, onEvent, last = "answer") {
    setBusy(+1);
    try {
      const response = await fetch(path, {
        method: "POST",
        headers: withKey({ "content-type": "application/json", accept: "text/event-stream" }),
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
          if (name === last) return json;
          if (name === "error") throw new Problem(json, json.status || 500);
          onEvent(name, json);
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
    const key = keyProblem(problem.status);
    if (key) lines.push(key);
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
    if (problem.status === 401) {
      element.dataset.problem = "unauthorized";
      $("api-key").setAttribute("aria-invalid", "true");
    } else {
      delete element.dataset.problem;
    }
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

  /// The budget as typed: checkSettings has refused anything outside the API's limits, so
  /// nothing is replaced or clamped behind the player's back.
  const budget = () => Number($("budget").value.trim());

  /// The settings that are out of the limits GET /games gives, each as [input id, words]. The
  /// page refuses them itself, in words, rather than clamping them or asking the API.
  function checkSettings() {
    const errors = [];
    const name = $("games").querySelector(`[data-game="${state.game.name}"]`)?.textContent || state.game.name;
    const info = state.game.board;
    const whole = (id) => {
      const text = $(id).value.trim();
      return { text: text || "nothing", n: /^\d+$/.test(text) ? Number(text) : NaN };
    };
    const rows = whole("rows");
    const cols = whole("cols");
    if (!(rows.n >= info.min_rows && rows.n <= info.max_rows)) {
      errors.push(["rows", `Rows: ${rows.text} is not a board size of ${name}; it takes ${info.min_rows} to ${info.max_rows} rows.`]);
    } else {
      const most = (info.max_cols_for_rows || {})[rows.n] ?? info.max_cols;
      if (!(cols.n >= info.min_cols && cols.n <= most)) {
        const rowsPart = most === info.max_cols ? "" : ` with ${rows.n} rows`;
        errors.push(["cols", `Columns: ${cols.text} is not a board size of ${name}; it takes ${info.min_cols} to ${most} columns${rowsPart}.`]);
      }
    }
    const b = whole("budget");
    const max = state.game.limits.max_budget_ms;
    if (!(b.n >= 1 && b.n <= max)) errors.push(["budget", `Budget: ${b.text} ms is out of range; give 1 to ${max.toLocaleString("en")} ms.`]);
    const seed = $("seed").value.trim();
    if (seed && !(/^\d+$/.test(seed) && Number(seed) <= Number.MAX_SAFE_INTEGER)) {
      errors.push(["seed", `Seed: ${seed} is not a whole number from 0 to ${Number.MAX_SAFE_INTEGER.toLocaleString("en")} (or leave it empty).`]);
    }
    for (const id of ["rows", "cols", "budget", "seed"]) {
      if (errors.some(([at]) => at === id)) $(id).setAttribute("aria-invalid", "true");
      else $(id).removeAttribute("aria-invalid");
    }
    return errors;
  }

  /// Whether the settings can be sent; if not, says why next to the board and in the status.
  function settingsOk() {
    const errors = checkSettings();
    if (errors.length) {
      state.settingsError = true;
      showProblem($("problem"), new Problem({ title: "Settings not applied", detail: errors.map(([, words]) => words).join("\n") }, 0));
      setStatus("Fix the setting marked in red to go on (the limits come from GET /games).");
      return false;
    }
    if (state.settingsError) {
      state.settingsError = false;
      showProblem($("problem"), null);
    }
    return true;
  }

  /// kibitz's strength for its own moves: the level control's value, and the seed if given.
  function levelFields() {
    const fields = { level: Number($("level").value) };
    const seed = $("seed").value.trim();
    if (seed && fields.level < state.game.limits.max_level) fields.seed = Number(seed);
    return fields;
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
    if (!state.game || checkSettings().length) return;
    const body = requestBody(state.heat ? { analysis: true } : {});
    const json = JSON.stringify(body);
    // With a key, the command names it by a variable: the key itself is never shown.
    const auth = apiKey() ? ` -H "Authorization: Bearer $KIBITZ_API_KEY"` : "";
    $("request-curl").textContent =
      `curl -s ${location.origin}/move -H 'content-type: application/json'${auth} \\\n  -d ${shellQuote(json)}`;
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
    state.analysisMove = null;
    state.suggestion = null;
  }

  function newGame() {
    if (!settingsOk()) return;
    readSetup();
    positionChanged();
    state.board = emptyBoard();
    state.toMove = "X";
    state.start = { board: emptyBoard(), toMove: "X" };
    state.moves = [];
    state.history = [];
    state.last = null;
    state.ghosts = [];
    state.result = null;
    showProblem($("problem"), null);
    if (review.game !== state.game.name || review.rows !== state.rows || review.cols !== state.cols) clearReview();
    review.shown = null; // the new game is on the board, not a reviewed ply
    $("review-back").hidden = true;
    buildBoard();
    clearReport();
    continuePlay();
  }

  function play(move) {
    state.history.push({ board: state.board.map((r) => r.slice()), toMove: state.toMove, last: state.last });
    state.board[move.row][move.col] = state.toMove;
    state.moves.push({ row: move.row, col: move.col });
    state.toMove = other(state.toMove);
    state.last = move;
    state.analysis = null;
    state.analysisMove = null;
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
    if (!settingsOk()) return;
    const epoch = state.epoch;
    const fields = levelFields();
    setStatus(`kibitz (${state.toMove}) is thinking at level ${fields.level}… (budget ${budget()} ms)`);
    const live = $("live");
    // The list belongs to this search alone, and shows once it has a depth (a book answer has
    // none, and gets no empty heading).
    clearLive();
    try {
      const report = await callStream("/move", requestBody(fields), (name, it) => {
        if (epoch !== state.epoch || name !== "iteration") return;
        live.hidden = false;
        $("live-title").hidden = false;
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
      const seed = report.seed === undefined || report.seed === null ? "" : `, seed ${report.seed}${fields.seed === undefined ? " (drawn fresh)" : ""}`;
      const strength = report.level >= state.game.limits.max_level ? "full strength" : `level ${report.level}${seed}`;
      showReport(report, "kibitz", `kibitz's move (${report.to_move}) at ${strength}`, true);
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
    if (!moves || outcome(state.board) || !settingsOk()) return;
    setStatus(state.editing ? "Analysing every move…" : `Your move (${state.toMove}); analysing every move…`);
    try {
      const report = await call("/move", requestBody({ analysis: true }));
      if (epoch !== state.epoch || state.analysis) return;
      showProblem($("problem"), null);
      state.analysis = report.analysis || [];
      state.analysisMove = report.move;
      state.ghosts = ghostsOf(report.pv, report.to_move);
      const you = state.toMove === state.human && !state.editing;
      showReport(report, you ? "you" : null, `heat map: every move ${you ? "you" : report.to_move} (${report.to_move}) can play, at full strength`);
      render();
    } catch (problem) {
      if (epoch !== state.epoch) return;
      showProblem($("problem"), problem);
      render();
      setStatus("The heat map could not be computed: see the message above the board.");
    }
  }

  async function hint() {
    if (outcome(state.board) || !settingsOk()) return;
    const epoch = state.epoch;
    setStatus(`Searching the best move for ${state.toMove}…`);
    try {
      const report = await call("/move", requestBody({}));
      if (epoch !== state.epoch) return;
      showProblem($("problem"), null);
      showReport(report, null, `best move for ${report.to_move}, at full strength`);
      state.suggestion = report.move;
      state.ghosts = ghostsOf(report.pv, report.to_move);
      render();
      setStatus(`Best move for ${report.to_move}: ${cellName(report.move)} (${verdict(report, report.to_move)}).`);
    } catch (problem) {
      if (epoch !== state.epoch) return;
      showProblem($("problem"), problem);
      render();
      setStatus("kibitz could not search this position: see the message above the board.");
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
    state.moves.length = state.history.length;
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
    state.start = { board: state.board.map((r) => r.slice()), toMove: state.toMove };
    state.moves = [];
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
    if (review.shown !== null) {
      setStatus("This is a position of the review: press Back to the game to play on.");
      return;
    }
    if (state.editing) {
      editCell(row, col);
      return;
    }
    if (state.result || state.busy > 0 && state.toMove !== state.human) return;
    if (state.toMove !== state.human || !settingsOk()) return;
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
  const rowName = (r) => String(state.rows - r);
  const cellName = (m) => `${columnName(m.col)}${rowName(m.row)}`;
  const plies = (n) => `${n} ${n === 1 ? "ply" : "plies"}`;

  function buildBoard() {
    const board = $("board");
    board.textContent = "";
    const frame = $("board-frame");
    frame.style.setProperty("--cols", state.cols);
    frame.style.setProperty("--rows", state.rows);
    frame.dataset.game = state.game.name;
    board.dataset.game = state.game.name;
    // The edges: row numbers on the left (the bottom row is 1), column letters underneath.
    const label = (text) => {
      const span = document.createElement("span");
      span.dataset.coord = text;
      span.textContent = text;
      return span;
    };
    $("ranks").replaceChildren(...Array.from({ length: state.rows }, (_, r) => label(rowName(r))));
    $("files").replaceChildren(...Array.from({ length: state.cols }, (_, c) => label(columnName(c))));
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
    // A ply of the review on the board instead of the game: its position, best and played move.
    const viewed = reviewedPosition();
    const shownBoard = viewed ? viewed.board : state.board;
    const heat = state.heat && !viewed;
    const byCell = new Map();
    if (heat && state.analysis) {
      for (const entry of state.analysis) byCell.set(`${entry.move.row},${entry.move.col}`, entry);
    }
    // The best cell is the move of the same report the search panel shows, so they agree.
    const best = heat && state.analysis && state.analysisMove;
    const spread = Math.max(0, ...(state.analysis || []).filter((e) => !e.outcome).map((e) => Math.abs(e.score)));
    const ghosts = new Map(viewed ? [] : state.ghosts.map((g) => [`${g.row},${g.col}`, g]));
    const winCells = new Set((state.result && !viewed ? state.result.cells : []).map((m) => `${m.row},${m.col}`));
    const last = viewed ? viewed.last : state.last;
    for (const cell of board.children) {
      const r = Number(cell.dataset.row);
      const c = Number(cell.dataset.col);
      const key = `${r},${c}`;
      const side = shownBoard[r][c];
      cell.textContent = side === "." ? "" : side;
      cell.className = "cell";
      if (side !== ".") cell.classList.add(`side-${side}`);
      const legal = !viewed && !state.result && isLegal(r, c);
      let words = side === "." ? (legal ? "empty" : "empty, not playable yet") : side;
      const entry = byCell.get(key);
      if (entry && side === ".") {
        cell.dataset.score = entry.score;
        cell.dataset.label = heatLabel(entry);
        cell.classList.add("heat", `heat-${entry.outcome || "eval"}`);
        cell.style.setProperty("--heat", entry.outcome ? "" : heatColour(entry.score, spread));
        cell.title = `${cellName({ row: r, col: c })}: ${heatWords(entry)} for ${state.toMove}`;
        words += `, ${heatWords(entry)}`;
        if (best && best.row === r && best.col === c) cell.classList.add("best");
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
      if (last && last.row === r && last.col === c) cell.classList.add("last");
      if (!viewed && state.suggestion && state.suggestion.row === r && state.suggestion.col === c) cell.classList.add("suggested");
      if (winCells.has(key)) cell.classList.add("won");
      const marks = viewed ? ["best", "played"].filter((k) => viewed[k].row === r && viewed[k].col === c) : [];
      if (marks.length) {
        cell.dataset.reviewMove = marks.join(" ");
        for (const k of marks) cell.classList.add(`review-${k}`);
        words += `, ${marks.join(" and ")} move of ply ${viewed.ply}`;
      } else {
        delete cell.dataset.reviewMove;
      }
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
    board.dataset.analysis = heat && state.analysis ? "ready" : "none";
    board.dataset.toMove = state.toMove;
    board.classList.toggle("editing", state.editing);
    board.classList.toggle("reviewing", Boolean(viewed));
    $("legend").hidden = !heat;
    $("heatmap").setAttribute("aria-pressed", String(state.heat));
    renderStatus();
    if (viewed) setStatus(viewed.words);
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
    } else if (state.settingsError) {
      setStatus("Fix the setting marked in red to go on (the limits come from GET /games).");
    } else if (state.toMove === state.human && state.busy === 0) {
      const level = Number($("level").value);
      setStatus(`Your move (${state.human}), against kibitz at ${level >= state.game.limits.max_level ? "full strength" : `level ${level}`}.`);
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

  /// The verdict in words; `who` is a side, "kibitz (O)" or "you (X)", and the verb agrees.
  function verdict(report, who) {
    const you = who.startsWith("you");
    if (report.outcome === "win") return `${who} ${you ? "win" : "wins"} in ${plies(report.plies_to_end)}`;
    if (report.outcome === "loss") return `${who} ${you ? "lose" : "loses"} in ${plies(report.plies_to_end)} with best play`;
    if (report.outcome === "draw") return "draw with best play";
    return `${formatScore(report.score)} for ${who} (heuristic, not proven)`;
  }

  /// The depth-by-depth list is part of one search's report: emptied and hidden with it.
  function clearLive() {
    $("live").replaceChildren();
    $("live").hidden = true;
    $("live-title").hidden = true;
  }

  function clearReport() {
    $("report-empty").hidden = false;
    $("report-fields").hidden = true;
    clearLive();
  }

  /// Shows one search's report, replacing everything of the one before: `what` says which
  /// search it was; only a streamed search (`streamed`) keeps the depths it listed.
  function showReport(report, whoName, what, streamed = false) {
    const who = whoName === "kibitz" ? `kibitz (${report.to_move})` : whoName === "you" ? `you (${report.to_move})` : report.to_move;
    if (!streamed) clearLive();
    $("report-empty").hidden = true;
    $("report-fields").hidden = false;
    $("r-search").textContent = what;
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

  // ---- Game review ----------------------------------------------------------------------

  const MARK_WORDS = { best: "best", good: "good", inaccuracy: "inaccuracy", mistake: "mistake", blunder: "blunder" };

  function clearReview() {
    review.token++; // an answer still on its way is dropped
    Object.assign(review, { game: null, start: null, moves: [], plies: [], first: null, shown: null });
    $("review-plies").replaceChildren();
    $("review-graph").replaceChildren();
    $("review-summary").hidden = true;
    $("review-summary").tBodies[0].replaceChildren();
    $("review-status").textContent = "";
    $("review-progress").hidden = true;
    $("review-back").hidden = true;
    $("review").dataset.state = "none";
    showProblem($("review-problem"), null);
  }

  /// A pasted move list as cells from the empty board: cell names (`b2`, `a1`; rows from the
  /// bottom; `h8h9i8` too), for Connect-4 column letters or 1-based column numbers (`4455`:
  /// Pons' digits), or the API's JSON list.
  /// Move numbers (`1.`) are skipped. The server judges legality; a Connect-4 disc's row comes
  /// from replaying the columns here.
  function parseMoveList(text) {
    const t = text.trim();
    let items;
    if (t.startsWith("[")) {
      items = JSON.parse(t).map((m) => (typeof m === "number" ? { col: m } : { row: m.row, col: m.col }));
    } else {
      // As the API reads `moves` (games/notation.rs): names with or without separators
      // ("h8h9i8"), Connect-4 digits one column each when nothing separates them ("4455").
      const words = t.split(/[\s,;]+/).filter((w) => w && !/^\d+\.$/.test(w));
      const separated = words.length > 1;
      items = words.flatMap((w) => {
        const word = w.toLowerCase();
        const bad = () => new Error(`"${w}" is not a move: write cells as ${gravity() ? "column letters (d) or numbers (4)" : "a1, b2, ..."}`);
        if (gravity()) {
          if (/^[a-z]+$/.test(word)) return [...word].map((c) => ({ col: c.charCodeAt(0) - 97 }));
          if (/^\d+$/.test(word)) {
            return separated ? [{ col: Number(word) - 1 }] : [...word].map((d) => ({ col: Number(d) - 1 }));
          }
          throw bad();
        }
        const cells = [...word.matchAll(/([a-z])(\d+)/g)];
        if (!cells.length || cells.map((m) => m[0]).join("") !== word) throw bad();
        return cells.map((m) => ({ row: state.rows - Number(m[2]), col: m[1].charCodeAt(0) - 97 }));
      });
    }
    if (!gravity()) return items;
    const heights = Array(state.cols).fill(state.rows - 1);
    return items.map(({ col }) => ({ row: heights[col]--, col }));
  }

  function reviewPasted() {
    let moves;
    try {
      moves = parseMoveList($("review-moves-text").value);
    } catch (error) {
      clearReview();
      showProblem($("review-problem"), new Problem({ title: "The move list cannot be read", detail: error.message }, 0));
      return;
    }
    startReview({ board: emptyBoard(), toMove: "X" }, moves);
  }

  /// Reviews `moves` played from `start` with POST /review as a stream: each ply is listed as
  /// it is judged, then the whole answer replaces the list and the graph is drawn.
  async function startReview(start, moves) {
    clearReview();
    if (!moves.length) {
      $("review-status").textContent = "No moves to review yet: play some, or paste a move list.";
      return;
    }
    if (!settingsOk()) return;
    const token = review.token;
    Object.assign(review, {
      game: state.game.name, rows: state.rows, cols: state.cols,
      start: { board: start.board.map((r) => r.slice()), toMove: start.toMove }, moves: moves.map((m) => ({ ...m })),
    });
    const body = {
      game: state.game.name,
      board: start.board.map((row) => row.join("")),
      to_move: start.toMove,
      moves: moves.map((m) => (gravity() ? m.col : { row: m.row, col: m.col })),
    };
    if (state.game.rules.length > 0) body.rules = { ...state.rules };
    const progress = $("review-progress");
    progress.max = moves.length;
    progress.value = 0;
    progress.hidden = false;
    const status = $("review-status");
    status.textContent = `Reviewing ${moves.length} plies…`;
    $("review").dataset.state = "running";
    try {
      const answer = await callStream("/review", body, (name, ply) => {
        if (token !== review.token || name !== "ply") return;
        review.plies.push(ply);
        progress.value = review.plies.length;
        status.textContent = `Reviewing… ply ${review.plies.length} of ${moves.length} judged.`;
        listPlies();
      }, "review");
      if (token !== review.token) return;
      review.plies = answer.plies;
      review.first = answer.first_outcome_change;
      progress.hidden = true;
      const change = review.first ? ` The outcome first changed at ply ${review.first.ply} (${review.first.player}): ${review.first.change}.` : " The proven outcome never changed.";
      const left = answer.complete ? "" : ` Stopped early (${answer.incomplete.reason}): ${answer.incomplete.plies_left} plies not judged.`;
      status.textContent = `${answer.plies.length} plies reviewed in ${Math.round(answer.elapsed_ms)} ms.${change}${left}`;
      listPlies();
      drawReviewGraph();
      showSummary(answer.summary);
      $("review").dataset.state = "done";
    } catch (problem) {
      if (token !== review.token) return;
      $("review").dataset.state = "failed";
      progress.hidden = true;
      status.textContent = "";
      showProblem($("review-problem"), problem);
    }
  }

  /// The review's summary beside the graph: each player's accuracy (lichess' formula on the
  /// chances each move gave away, docs/api.md "Game review") and the count of each mark. Each
  /// figure's cell carries data-player and data-summary (the field's name) for the tests.
  function showSummary(summary) {
    const table = $("review-summary");
    const rows = [["accuracy", "accuracy %"], ...Object.keys(MARK_WORDS).map((k) => [k, MARK_WORDS[k]])];
    table.tBodies[0].replaceChildren(...rows.map(([key, words]) => {
      const row = document.createElement("tr");
      const head = document.createElement("th");
      head.scope = "row";
      head.textContent = words;
      if (key !== "accuracy") head.className = `mark-${key}`;
      row.append(head);
      for (const player of ["X", "O"]) {
        const value = summary[player][key];
        const td = document.createElement("td");
        td.dataset.player = player;
        td.dataset.summary = key;
        td.textContent = value === null ? "–" : key === "accuracy" ? value.toFixed(1) : String(value);
        row.append(td);
      }
      return row;
    }));
    table.hidden = false;
  }

  function plyWords(p) {
    const proven = (outcome, n) => (outcome === "draw" ? "draw" : outcome ? `${outcome} in ${n}` : null);
    const played = proven(p.played_outcome, p.played_plies_to_end);
    return `${MARK_WORDS[p.mark] || p.mark}${p.outcome_change ? `: ${p.outcome_change}` : played ? ` (${played})` : ""}`;
  }

  function listPlies() {
    const list = $("review-plies");
    list.replaceChildren(...review.plies.map((p, i) => {
      const item = document.createElement("li");
      item.dataset.ply = p.ply;
      item.dataset.cell = `${p.played.row},${p.played.col}`;
      item.dataset.mark = p.mark;
      item.className = `mark-${p.mark}`;
      if (review.first && review.first.ply === p.ply) item.dataset.firstChange = "";
      if (review.shown === i) item.classList.add("shown");
      const button = document.createElement("button");
      button.type = "button";
      const best = p.best.row === p.played.row && p.best.col === p.played.col ? "" : `, best ${cellName(p.best)}`;
      button.textContent = `${p.ply}. ${p.player} ${cellName(p.played)}`;
      button.addEventListener("click", () => showPly(i));
      const words = document.createElement("span");
      words.textContent = ` ${plyWords(p)}${best}`;
      item.append(button, words);
      return item;
    }));
  }

  /// The position before ply `i` of the review, with its best and played move and words for
  /// the status line; null when the game is on the board.
  function reviewedPosition() {
    const i = review.shown;
    if (i === null || !review.plies[i]) return null;
    const board = review.start.board.map((r) => r.slice());
    let side = review.start.toMove;
    for (const m of review.moves.slice(0, i)) {
      board[m.row][m.col] = side;
      side = other(side);
    }
    const p = review.plies[i];
    const words = `Review, ply ${p.ply}: ${p.player} played ${cellName(p.played)} (${plyWords(p)}); ` +
      `the best was ${cellName(p.best)}. Back to the game to play on.`;
    return { board, best: p.best, played: p.played, ply: p.ply, last: i > 0 ? review.moves[i - 1] : null, words };
  }

  /// Shows ply `i` of the review on the board, or the game again (null).
  function showPly(i) {
    review.shown = i;
    $("review-back").hidden = i === null;
    for (const item of $("review-plies").children) item.classList.toggle("shown", Number(item.dataset.ply) === (i === null ? -1 : i + 1));
    render();
  }

  /// The score over the game from X's view, one point per ply (the position after it, as the
  /// mover's played score said) after the start (ply 1's best score): proven results at the
  /// top and bottom, heuristic ones squeezed by tanh so one big score does not flatten the rest.
  function drawReviewGraph() {
    const holder = $("review-graph");
    holder.replaceChildren();
    const plies = review.plies;
    if (!plies.length) return;
    const unit = Math.max(state.game.level_unit || 20, 1) * 4;
    const xView = (score, player) => (player === "X" ? score : -score);
    const level = (v) => (Math.abs(v) > PROVEN ? Math.sign(v) : 0.85 * Math.tanh(v / unit));
    const values = [level(xView(plies[0].best_score, plies[0].player)), ...plies.map((p) => level(xView(p.played_score, p.player)))];
    const width = 360;
    const height = 150;
    const left = 34;
    const top = 10;
    const plotH = height - top - 22;
    const step = (width - left - 8) / Math.max(plies.length, 1);
    const x = (k) => left + k * step;
    const y = (v) => top + plotH / 2 - (v * plotH) / 2;
    const svg = svgElement("svg", {
      viewBox: `0 0 ${width} ${height}`,
      role: "img",
      "aria-label": "The score over the game, from X's view: up is good for X",
      class: "review-svg",
    });
    for (const [v, text] of [[1, "X wins"], [0, "even"], [-1, "O wins"]]) {
      svg.appendChild(svgElement("line", { x1: left, x2: width - 4, y1: y(v), y2: y(v), class: v ? "grid" : "zero" }));
      svg.appendChild(svgElement("text", { x: left - 3, y: y(v) + 3, class: "axis", "text-anchor": "end" }, text.split(" ")[0]));
    }
    if (review.first) {
      const fx = x(review.first.ply);
      svg.appendChild(svgElement("line", { x1: fx, x2: fx, y1: top, y2: top + plotH, class: "first-change" }));
    }
    svg.appendChild(svgElement("polyline", { points: values.map((v, k) => `${x(k)},${y(v)}`).join(" "), class: "score-line" }));
    plies.forEach((p, i) => {
      const dot = svgElement("circle", { cx: x(i + 1), cy: y(values[i + 1]), r: 4.5, class: `dot mark-${p.mark}`, "data-graph-ply": p.ply });
      dot.appendChild(svgElement("title", {}, `ply ${p.ply}, ${p.player} ${cellName(p.played)}: ${plyWords(p)}`));
      dot.addEventListener("click", () => showPly(i));
      svg.appendChild(dot);
    });
    svg.appendChild(svgElement("text", { x: left + (width - left) / 2, y: height - 4, class: "axis", "text-anchor": "middle" }, `ply (1 to ${plies.length}); a dot's colour is its mark`));
    holder.appendChild(svg);
  }

  // ---- Minimax against alpha-beta -------------------------------------------------------

  async function compare() {
    if (!settingsOk()) return;
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

  /// The settings into the state; checkSettings has accepted them.
  function readSetup() {
    state.rows = Number($("rows").value);
    state.cols = Number($("cols").value);
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
    buildLevels();
  }

  /// What a level means in this game, from GET /games, for the level control's tooltip.
  function levelWords(entry) {
    if (entry.level >= state.game.limits.max_level) {
      return `Level ${entry.level}: full strength (the API's default), kibitz's whole search within the budget.`;
    }
    const pct = (x) => `${+(x * 100).toFixed(1)}%`;
    return `Level ${entry.level}: looks at most ${plies(entry.max_depth)} ahead with ${pct(entry.budget_share)} of the budget, ` +
      `then draws its move among the near-best (softmax temperature ${entry.temperature} × ${state.game.level_unit} points), ` +
      `and ${pct(entry.blunder)} of its moves are a plausible mistake instead.`;
  }

  /// The level control: 1 to 10, each the API's `level` of the same number (10 is full
  /// strength), with what it means in this game as the tooltip.
  function buildLevels() {
    const select = $("level");
    const chosen = select.value || String(state.game.limits.max_level);
    select.replaceChildren(...state.game.levels.map((entry) => {
      const option = document.createElement("option");
      option.value = entry.level;
      option.textContent = entry.level >= state.game.limits.max_level ? `${entry.level} (full strength)` : String(entry.level);
      option.title = levelWords(entry);
      return option;
    }));
    select.value = chosen;
    levelTooltip();
  }

  function levelTooltip() {
    const entry = state.game.levels.find((l) => String(l.level) === $("level").value);
    $("level-label").title = entry ? `${levelWords(entry)} Applies to kibitz's moves; the heat map and Best move are always full strength.` : "";
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
    clearReview();
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
    $("review-run").addEventListener("click", () => startReview(state.start, state.moves));
    $("review-pasted").addEventListener("click", reviewPasted);
    $("review-back").addEventListener("click", () => showPly(null));
    $("copy-curl").addEventListener("click", () => copy($("request-curl").textContent, "curl command"));
    $("copy-json").addEventListener("click", () => {
      $("request-json").hidden = false;
      copy($("request-json").textContent, "JSON body");
    });
    $("setup").addEventListener("change", () => newGame());
    $("setup").addEventListener("submit", (event) => event.preventDefault());
    // Budget, level and seed apply from kibitz's next move on, without a new game.
    for (const id of ["budget", "seed", "level"]) {
      $(id).addEventListener("change", (event) => {
        event.stopPropagation();
        if (id === "level") levelTooltip();
        if (!settingsOk()) return;
        updateRequestPanel();
        renderStatus();
        if (!state.result && !state.editing && state.toMove === engineSide() && state.busy === 0) engineMove();
      });
    }
    $("human").addEventListener("change", (event) => {
      event.stopPropagation();
      state.human = $("human").value;
      positionChanged();
      continuePlay();
    });
    for (const b of document.querySelectorAll("[data-game]")) b.addEventListener("click", () => selectGame(b.dataset.game));
    $("api-key").value = apiKey();
    $("key-form").addEventListener("submit", (event) => event.preventDefault());
    $("api-key").addEventListener("change", () => {
      const key = $("api-key").value.trim();
      try {
        if (key) sessionStorage.setItem(KEY_STORAGE, key);
        else sessionStorage.removeItem(KEY_STORAGE);
      } catch (_) {
        // Storage refused: the key cannot be kept, so none is sent.
      }
      $("api-key").removeAttribute("aria-invalid");
      updateRequestPanel();
      // A move refused for want of a key is asked again with it.
      if (state.game && !state.result && !state.editing && state.toMove === engineSide() && state.busy === 0) {
        showProblem($("problem"), null);
        engineMove();
      }
    });

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
