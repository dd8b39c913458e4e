// kibitz playground, teaching trees: a game tree written by hand, evaluated by POST /tree and
// drawn as SVG with the value of every node, the chosen line, the branches alpha-beta pruned
// (greyed, with the alpha and beta that cut them) and a step-through of its trace.
//
// The server is the authority on the evaluation; the page parses the bracket text only to
// know the tree's shape, which the answer does not repeat. It then matches the answer's trace
// (alpha-beta's visit order, one step per node entered) to that shape: children are entered
// in order until a cut, so a child that is not the next step of the trace is pruned, and so
// are its later siblings and everything below them. Those nodes carry data-pruned="true".
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const SVG = "http://www.w3.org/2000/svg";
  // The server takes trees of up to 100,000 nodes; a drawing of more than this is unreadable
  // and slow, so larger trees get the summary only.
  const MAX_DRAWN_NODES = 1500;

  const CLASSICS = [
    {
      name: "Textbook: three moves, three replies each",
      tree: "[A, [B, (B1,3), (B2,12), (B3,8)], [C, (C1,2), (C2,4), (C3,6)], [D, (D1,14), (D2,5), (D3,2)]]",
    },
    {
      name: "Same tree, worst move order (no cut at all)",
      tree: "[A, [D, (D3,2), (D2,5), (D1,14)], [C, (C3,6), (C2,4), (C1,2)], [B, (B1,3), (B3,8), (B2,12)]]",
    },
    {
      name: "Same tree, best move order",
      tree: "[A, [B, (B1,3), (B3,8), (B2,12)], [C, (C1,2), (C2,4), (C3,6)], [D, (D3,2), (D2,5), (D1,14)]]",
    },
    {
      name: "Depth 3: an alpha and a beta cut",
      tree: "[A, [B, [D, (H,3), (I,5)], [E, (J,6), (K,9)]], [C, [F, (L,1), (M,2)], [G, (N,0), (O,-1)]]]",
    },
    {
      name: "Depth 4: deep cut-offs",
      tree: "[R, [A, [A1, [a, (a1,5), (a2,6)], [b, (b1,7), (b2,4)]], [A2, [c, (c1,3), (c2,8)], [d, (d1,9), (d2,2)]]], " +
        "[B, [B1, [e, (e1,1), (e2,2)], [f, (f1,6), (f2,3)]], [B2, [g, (g1,4), (g2,7)], [h, (h1,5), (h2,8)]]]]",
    },
  ];

  // ---- Parsing the bracket text (shape only; the server validates) ------------------------

  function parse(text) {
    const trimmed = text.trim();
    if (trimmed.startsWith("{")) return fromJson(JSON.parse(trimmed));
    let i = 0;
    const skip = () => {
      while (i < text.length && /\s/.test(text[i])) i++;
    };
    const expect = (ch) => {
      skip();
      if (text[i] !== ch) throw new Error(`expected '${ch}' at ${i}`);
      i++;
    };
    const name = () => {
      skip();
      const quote = text[i];
      if (quote === "'" || quote === '"') {
        const end = text.indexOf(quote, i + 1);
        if (end < 0) throw new Error("unclosed quote");
        const n = text.slice(i + 1, end);
        i = end + 1;
        return n;
      }
      const m = /^[A-Za-z0-9_]+/.exec(text.slice(i));
      if (!m) throw new Error(`expected a name at ${i}`);
      i += m[0].length;
      return m[0];
    };
    const number = () => {
      skip();
      const m = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?/.exec(text.slice(i));
      if (!m) throw new Error(`expected a number at ${i}`);
      i += m[0].length;
      return Number(m[0]);
    };
    // An explicit stack, like the server's parser: a deep tree must not overflow ours either.
    const root = { children: [] };
    const stack = [root];
    skip();
    do {
      skip();
      const top = stack[stack.length - 1];
      if (text[i] === "(") {
        i++;
        const leaf = { name: name(), value: null };
        expect(",");
        leaf.value = number();
        expect(")");
        top.children.push(leaf);
      } else if (text[i] === "[") {
        i++;
        const node = { name: name(), children: [] };
        top.children.push(node);
        stack.push(node);
      } else {
        throw new Error(`expected '[' or '(' at ${i}`);
      }
      for (;;) {
        skip();
        if (stack.length === 1) break;
        if (text[i] === ",") {
          i++;
          break;
        }
        if (text[i] === "]") {
          i++;
          stack.pop();
          continue;
        }
        throw new Error(`expected ',' or ']' at ${i}`);
      }
    } while (stack.length > 1);
    return root.children[0];
  }

  function fromJson(json) {
    const node = { name: json.name };
    if (json.children) node.children = json.children.map(fromJson);
    else node.value = json.value;
    return node;
  }

  // ---- Laying out, matching the trace ---------------------------------------------------

  /// Every node in preorder with its depth, player and minimax value; leaves numbered for x.
  function annotate(root, rootPlayer) {
    const nodes = [];
    let leaves = 0;
    const visit = [{ node: root, depth: 0, player: rootPlayer, parent: null }];
    while (visit.length) {
      const item = visit.pop();
      const n = item.node;
      n.depth = item.depth;
      n.player = item.player;
      n.parent = item.parent;
      nodes.push(n);
      if (n.children) {
        for (let k = n.children.length - 1; k >= 0; k--) {
          visit.push({ node: n.children[k], depth: item.depth + 1, player: item.player === "max" ? "min" : "max", parent: n });
        }
      } else {
        n.x = leaves++;
      }
    }
    // Values and x positions bottom-up: reverse preorder sees children before parents.
    for (let k = nodes.length - 1; k >= 0; k--) {
      const n = nodes[k];
      if (!n.children) {
        n.minimax = n.value;
        continue;
      }
      const values = n.children.map((c) => c.minimax);
      n.minimax = n.player === "max" ? Math.max(...values) : Math.min(...values);
      n.x = (n.children[0].x + n.children[n.children.length - 1].x) / 2;
    }
    return { nodes, leaves };
  }

  /// Marks the nodes alpha-beta entered (with their trace step) and the ones it pruned.
  function matchTrace(root, trace) {
    let next = 0;
    if (trace.length && trace[0].node === root.name) {
      root.step = 0;
      next = 1;
    }
    // Iterative preorder walk over entered nodes only.
    const walk = [{ node: root, child: 0 }];
    while (walk.length) {
      const top = walk[walk.length - 1];
      const kids = top.node.children || [];
      if (top.child >= kids.length) {
        walk.pop();
        continue;
      }
      const child = kids[top.child++];
      if (next < trace.length && trace[next].node === child.name) {
        child.step = next++;
        walk.push({ node: child, child: 0 });
      } else {
        // A cut: this child and its later siblings were never entered.
        for (let k = top.child - 1; k < kids.length; k++) prune(kids[k]);
        top.child = kids.length;
      }
    }
  }

  function prune(node) {
    const todo = [node];
    while (todo.length) {
      const n = todo.pop();
      n.pruned = true;
      for (const c of n.children || []) todo.push(c);
    }
  }

  // ---- Drawing ----------------------------------------------------------------------------

  function el(name, attributes, text) {
    const e = document.createElementNS(SVG, name);
    for (const [k, v] of Object.entries(attributes)) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  const fmt = (v) => (v === null || v === undefined ? "∞" : Number.isInteger(v) ? String(v) : v.toFixed(2));
  const bound = (v, sign) => (v === null || v === undefined ? `${sign}∞` : fmt(v));

  const view = { root: null, nodes: [], answer: null, step: -1 };

  function draw() {
    const holder = $("tree-drawing");
    holder.textContent = "";
    if (!view.root) return;
    const { nodes, answer } = view;
    if (nodes.length > MAX_DRAWN_NODES) {
      holder.textContent = `${nodes.length.toLocaleString("en")} nodes: too many to draw (at most ${MAX_DRAWN_NODES}); the evaluation is above.`;
      return;
    }
    const leaves = nodes.filter((n) => !n.children).length;
    const maxDepth = Math.max(...nodes.map((n) => n.depth));
    const dx = 46;
    const dy = 78;
    const width = Math.max(leaves * dx + 20, 200);
    const height = (maxDepth + 1) * dy + 30;
    const X = (n) => 10 + dx / 2 + n.x * dx;
    const Y = (n) => 34 + n.depth * dy;
    const pathSet = new Set();
    {
      // The chosen line by names, followed from the root through the children.
      let n = view.root;
      pathSet.add(n);
      for (const name of answer.path.slice(1)) {
        n = (n.children || []).find((c) => c.name === name);
        if (!n) break;
        pathSet.add(n);
      }
    }
    const cuts = new Map();
    for (const p of answer.alphabeta.pruned) cuts.set(`${p.parent}/${p.node}`, p);
    const current = view.step >= 0 ? view.trace[view.step] : null;
    const svg = el("svg", {
      viewBox: `0 0 ${width} ${height}`,
      width,
      height,
      role: "img",
      "aria-label": `Game tree: value ${fmt(answer.value)}, best ${answer.best || "none"}, ${answer.alphabeta.pruned.length} cuts`,
      class: "tree-svg",
    });
    const edges = el("g", { class: "edges" });
    const shapes = el("g", { class: "nodes" });
    for (const n of nodes) {
      if (n.parent) {
        const onPath = pathSet.has(n) && pathSet.has(n.parent);
        edges.appendChild(el("line", {
          x1: X(n.parent), y1: Y(n.parent) + 12, x2: X(n), y2: Y(n) - 12,
          class: `edge${onPath ? " path" : ""}${n.pruned ? " pruned" : ""}`,
        }));
      }
      const classes = ["node", n.player];
      if (n.pruned) classes.push("pruned");
      if (pathSet.has(n)) classes.push("path");
      if (current && n.step === view.step) classes.push("current");
      else if (view.step >= 0 && n.step !== undefined && n.step > view.step) classes.push("later");
      const g = el("g", {
        class: classes.join(" "),
        "data-node": n.name,
        "data-pruned": n.pruned ? "true" : "false",
        transform: `translate(${X(n)},${Y(n)})`,
      });
      if (n.children) {
        const shape = n.player === "max" ? "M0,-14 L15,11 L-15,11 Z" : "M0,14 L15,-11 L-15,-11 Z";
        g.appendChild(el("path", { d: shape, class: "shape" }));
      } else {
        g.appendChild(el("rect", { x: -13, y: -11, width: 26, height: 22, rx: 3, class: "shape" }));
      }
      g.appendChild(el("text", { y: n.children ? (n.player === "max" ? 7 : 1) : 4, class: "value", "text-anchor": "middle" }, fmt(n.minimax)));
      g.appendChild(el("text", { y: n.children ? -18 : 25, class: "name", "text-anchor": "middle" }, n.name));
      const cut = n.parent ? cuts.get(`${n.parent.name}/${n.name}`) : null;
      if (cut) {
        g.appendChild(el("text", { y: 38, class: "cut", "text-anchor": "middle" }, `α=${bound(cut.alpha, "−")} β=${bound(cut.beta, "+")}`));
      }
      const title = n.pruned
        ? `${n.name}: pruned${cut ? ` (${cut.cut} cut at ${cut.parent}, α=${bound(cut.alpha, "−")}, β=${bound(cut.beta, "+")})` : ""}; minimax value ${fmt(n.minimax)}`
        : `${n.name} (${n.player.toUpperCase()}): minimax value ${fmt(n.minimax)}`;
      g.appendChild(el("title", {}, title));
      shapes.appendChild(g);
    }
    svg.append(edges, shapes);
    holder.appendChild(svg);
    stepText();
  }

  function stepText() {
    const text = $("trace-text");
    if (!view.trace || !view.trace.length) {
      text.textContent = "";
      return;
    }
    if (view.step < 0) {
      text.textContent = `${view.trace.length} nodes entered by alpha-beta; step through them with ▶.`;
      return;
    }
    const s = view.trace[view.step];
    text.textContent = `Step ${view.step + 1} of ${view.trace.length}: ${s.node} entered with α=${bound(s.alpha, "−")}, β=${bound(s.beta, "+")}; returns ${fmt(s.value)}.`;
  }

  // ---- Evaluating -----------------------------------------------------------------------

  async function evaluate() {
    const text = $("tree-text").value;
    const root = $("tree-root").value;
    const problem = $("tree-problem");
    problem.hidden = true;
    document.body.dataset.busy = "true";
    try {
      let tree = text;
      if (text.trim().startsWith("{")) {
        try {
          tree = JSON.parse(text);
        } catch (e) {
          throw { title: "The tree is not valid JSON", detail: e.message };
        }
      }
      const response = await fetch("/tree", {
        method: "POST",
        headers: window.kibitzApi.withKey({ "content-type": "application/json" }),
        body: JSON.stringify({ tree, root, trace: true }),
      });
      const answer = await response.json().catch(() => ({ title: `HTTP ${response.status}` }));
      if (!response.ok) throw answer;
      let shape;
      try {
        shape = parse(text);
      } catch (e) {
        throw { title: "The page cannot draw this tree", detail: e.message };
      }
      const { nodes } = annotate(shape, root);
      matchTrace(shape, answer.trace || []);
      Object.assign(view, { root: shape, nodes, answer, trace: answer.trace || [], step: -1 });
      const ab = answer.alphabeta;
      $("tree-summary").textContent =
        `Value ${fmt(answer.value)}, best move ${answer.best || "—"}, line ${answer.path.join(" → ")}. ` +
        `Minimax visits ${answer.minimax.nodes} nodes (${answer.minimax.leaves} leaves); alpha-beta ${ab.nodes} ` +
        `(${ab.leaves} leaves), ${ab.pruned.length} cut${ab.pruned.length === 1 ? "" : "s"}` +
        (ab.pruned.length
          ? `: ${ab.pruned.slice(0, 8).map((p) => `${p.node} under ${p.parent}`).join(", ")}` +
            (ab.pruned.length > 8 ? ` and ${ab.pruned.length - 8} more.` : ".")
          : ".");
      draw();
    } catch (body) {
      const lines = [body.detail ? `${body.title}: ${body.detail}` : body.title || String(body)];
      for (const e of body.errors || []) if (e.message && !(body.detail || "").includes(e.message)) lines.push(e.message);
      const key = window.kibitzApi.keyProblem(body.status);
      if (key) lines.push(key);
      problem.textContent = lines.join("\n");
      problem.hidden = false;
      Object.assign(view, { root: null, nodes: [], answer: null, trace: [], step: -1 });
      $("tree-summary").textContent = "";
      draw();
      stepText();
    } finally {
      document.body.dataset.busy = "false";
    }
  }

  function step(to) {
    if (!view.trace || !view.trace.length) return;
    view.step = Math.min(Math.max(to, -1), view.trace.length - 1);
    draw();
  }

  let shown = false;

  function show() {
    if (shown) return;
    shown = true;
    evaluate();
  }

  function start() {
    const select = $("tree-classic");
    CLASSICS.forEach((c, i) => {
      const option = document.createElement("option");
      option.value = i;
      option.textContent = c.name;
      select.appendChild(option);
    });
    $("tree-text").value = CLASSICS[0].tree;
    select.addEventListener("change", () => {
      $("tree-text").value = CLASSICS[Number(select.value)].tree;
      evaluate();
    });
    $("tree-root").addEventListener("change", evaluate);
    $("tree-evaluate").addEventListener("click", evaluate);
    $("trace-first").addEventListener("click", () => step(0));
    $("trace-prev").addEventListener("click", () => step(view.step - 1));
    $("trace-next").addEventListener("click", () => step(view.step + 1));
    $("trace-all").addEventListener("click", () => step(-1));
  }

  window.kibitzTree = { show };
  start();
})();
