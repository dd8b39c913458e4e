"""The playground page in a real browser: each test drives the page only through its
automation hooks (data-game, data-row/data-col, data-heatmap, data-score, data-pruned) and
checks what it shows against the API's own answers. Each writes a screenshot of its view."""

import json

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from conftest import (
    board_text,
    cell,
    console_errors,
    foreign,
    idle,
    my_turn_or_over,
    open_game,
    post_json,
    requested_urls,
    screenshot,
    set_budget,
    wait,
)


def winner_of(grid, k):
    """The side with k in a row on `grid`, "draw" on a full board, else None."""
    rows, cols = len(grid), len(grid[0])
    for r in range(rows):
        for c in range(cols):
            side = grid[r][c]
            if side == ".":
                continue
            for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
                cells = [(r + i * dr, c + i * dc) for i in range(k)]
                if all(0 <= rr < rows and 0 <= cc < cols and grid[rr][cc] == side for rr, cc in cells):
                    return side
    return "draw" if all("." not in row for row in grid) else None


def heat_scores(driver):
    cells = driver.execute_script(
        "return [...document.querySelectorAll('#board [data-score]')]"
        ".map(c => [Number(c.dataset.row), Number(c.dataset.col), Number(c.dataset.score)])"
    )
    return {(r, c): s for r, c, s in cells}


def page_request(driver):
    """The request the page shows for its current position (its "Copy as JSON" text)."""
    return json.loads(driver.find_element(By.ID, "request-json").get_attribute("textContent"))


def test_a_whole_tictactoe_game_is_played_by_clicks_to_its_end(browser, base_url, screenshot_dir):
    open_game(browser, base_url, "tictactoe")
    board = browser.find_element(By.ID, "board")
    clicks = 0
    while True:
        wait(browser, my_turn_or_over, message="kibitz did not answer")
        if board.get_attribute("data-result"):
            break
        grid = board_text(browser)
        row, col = next((r, c) for r in range(3) for c in range(3) if grid[r][c] == ".")
        cell(browser, row, col).click()
        clicks += 1
        assert clicks <= 5, "a tic-tac-toe game has at most five X moves"
    grid = board_text(browser)
    result = board.get_attribute("data-result")
    assert result == winner_of(grid, 3), grid
    # kibitz plays tic-tac-toe perfectly: the first-empty-cell player cannot beat it.
    assert result in ("O", "draw"), grid
    assert "Game over" in browser.find_element(By.ID, "status").text
    screenshot(browser, screenshot_dir, "tictactoe")


def test_keyboard_arrows_and_enter_play_a_move(browser, base_url):
    open_game(browser, base_url, "tictactoe")
    cell(browser, 0, 0).send_keys(Keys.ARROW_RIGHT)
    active = browser.switch_to.active_element
    assert (active.get_attribute("data-row"), active.get_attribute("data-col")) == ("0", "1")
    active.send_keys(Keys.ENTER)
    wait(browser, my_turn_or_over)
    assert cell(browser, 0, 1).text == "X"
    assert board_text(browser)[0][1] == "X"
    assert sum(row.count("O") for row in board_text(browser)) == 1
    # The top row of three is row 3: rows are numbered from the bottom, as on the edges.
    assert cell(browser, 0, 1).get_attribute("aria-label") == "b3: X"


def test_the_connect4_heat_map_shows_the_scores_post_move_analysis_returns(browser, base_url, screenshot_dir):
    open_game(browser, base_url, "connect4")
    set_budget(browser, 300)
    for col in (3, 3, 2):
        wait(browser, my_turn_or_over)
        cell(browser, 0, col).click()  # any cell of a column drops a disc into it
    wait(browser, my_turn_or_over)
    assert sum(row.count("X") for row in board_text(browser)) == 3
    browser.find_element(By.CSS_SELECTOR, "[data-heatmap]").click()
    wait(browser, lambda d: idle(d) and d.find_element(By.ID, "board").get_attribute("data-analysis") == "ready")
    shown = heat_scores(browser)

    request = page_request(browser)
    assert request["analysis"] is True
    assert request["board"] == board_text(browser)
    answer = post_json(base_url, "/move", request)
    expected = {(m["move"]["row"], m["move"]["col"]): m["score"] for m in answer["analysis"]}
    assert shown == expected
    # Every column has room: seven legal moves, each the landing cell of its column.
    grid = board_text(browser)
    landing = {(max(r for r in range(6) if grid[r][c] == "."), c) for c in range(7)}
    assert set(shown) == landing
    labels = [s.text for s in browser.find_elements(By.CSS_SELECTOR, "#column-scores span")]
    assert len(labels) == 7 and all(labels), labels
    screenshot(browser, screenshot_dir, "connect4-heatmap")


def test_the_textbook_tree_marks_the_pruned_nodes_tree_names(browser, base_url, screenshot_dir):
    open_game(browser, base_url, "tree")
    wait(browser, lambda d: idle(d) and d.find_elements(By.CSS_SELECTOR, "#tree-drawing [data-node]"))
    nodes = browser.find_elements(By.CSS_SELECTOR, "#tree-drawing [data-node]")
    every = {n.get_attribute("data-node") for n in nodes}
    marked = {n.get_attribute("data-node") for n in nodes if n.get_attribute("data-pruned") == "true"}

    text = browser.find_element(By.ID, "tree-text").get_attribute("value")
    answer = post_json(base_url, "/tree", {"tree": text, "root": "max", "trace": True})
    named = {p["node"] for p in answer["alphabeta"]["pruned"]}
    entered = {step["node"] for step in answer["trace"]}
    assert named == {"C2"}
    assert named <= marked
    # Everything alpha-beta never entered is greyed, and nothing else.
    assert marked == every - entered == {"C2", "C3"}
    cut = browser.find_element(By.CSS_SELECTOR, '#tree-drawing [data-node="C2"] .cut')
    assert cut.text == "α=3 β=2"

    for _ in range(3):
        browser.find_element(By.ID, "trace-next").click()
    assert browser.find_element(By.ID, "trace-text").text.startswith(f"Step 3 of {len(answer['trace'])}: B1")
    current = browser.find_element(By.CSS_SELECTOR, "#tree-drawing .current")
    assert current.get_attribute("data-node") == "B1"
    # Nodes the trace has not reached yet are not greyed (faded) like the pruned ones: drawn
    # at full strength, white with a dotted outline.
    style = "return getComputedStyle(document.querySelector(arguments[0]))[arguments[1]]"
    later = browser.find_elements(By.CSS_SELECTOR, '#tree-drawing .later[data-pruned="false"]')
    assert {n.get_attribute("data-node") for n in later} >= {"B2", "B3", "C", "D"}
    assert browser.execute_script(style, '#tree-drawing [data-node="D"]', "opacity") == "1"
    later_fill = browser.execute_script(style, '#tree-drawing [data-node="D"] .shape', "fill")
    pruned_fill = browser.execute_script(style, '#tree-drawing [data-node="C2"] .shape', "fill")
    assert later_fill == "rgb(255, 255, 255)" != pruned_fill
    screenshot(browser, screenshot_dir, "tree")


def test_a_deeper_classic_tree_greys_every_node_alpha_beta_skips(browser, base_url):
    open_game(browser, base_url, "tree")
    wait(browser, lambda d: idle(d) and d.find_elements(By.CSS_SELECTOR, "#tree-drawing [data-node]"))
    browser.find_element(By.CSS_SELECTOR, "#tree-classic option[value='3']").click()
    wait(browser, lambda d: idle(d) and d.find_elements(By.CSS_SELECTOR, '#tree-drawing [data-node="O"]'))
    nodes = browser.find_elements(By.CSS_SELECTOR, "#tree-drawing [data-node]")
    marked = {n.get_attribute("data-node") for n in nodes if n.get_attribute("data-pruned") == "true"}
    text = browser.find_element(By.ID, "tree-text").get_attribute("value")
    answer = post_json(base_url, "/tree", {"tree": text, "root": "max", "trace": True})
    assert {p["node"] for p in answer["alphabeta"]["pruned"]} == {"K", "G"}
    assert marked == {n.get_attribute("data-node") for n in nodes} - {s["node"] for s in answer["trace"]}
    assert marked == {"K", "G", "N", "O"}


def test_minimax_and_alphabeta_node_counts_are_charted_side_by_side(browser, base_url, screenshot_dir):
    open_game(browser, base_url, "tictactoe")
    browser.find_element(By.ID, "compare-run").click()
    wait(browser, lambda d: idle(d) and d.find_element(By.ID, "compare-table").is_displayed())
    rows = [
        [td.text for td in tr.find_elements(By.TAG_NAME, "td")]
        for tr in browser.find_elements(By.CSS_SELECTOR, "#compare-table tbody tr")
    ]
    request = page_request(browser)
    minimax = post_json(base_url, "/move", {**request, "algorithm": "minimax"})
    alphabeta = post_json(base_url, "/move", {**request, "algorithm": "alphabeta"})
    by_depth = {int(r[0]): r for r in rows}
    for it in minimax["iterations"]:
        assert by_depth[it["depth"]][1] == f"{it['nodes']:,}"
    for it in alphabeta["iterations"]:
        assert by_depth[it["depth"]][2] == f"{it['nodes']:,}"
    # The empty board is solved by plain minimax too: nine plies deep, and never fewer nodes.
    assert max(it["depth"] for it in minimax["iterations"]) == 9
    for r in rows:
        if r[1] != "—" and r[2] != "—":
            assert int(r[1].replace(",", "")) >= int(r[2].replace(",", "")), r
    bars = browser.find_elements(By.CSS_SELECTOR, "#compare-chart rect.minimax")
    assert len(bars) == len(minimax["iterations"])
    assert len(browser.find_elements(By.CSS_SELECTOR, "#compare-chart rect.alphabeta")) == len(alphabeta["iterations"])
    screenshot(browser, screenshot_dir, "compare")


def test_gomoku_answers_a_move_and_draws_its_best_line(browser, base_url, screenshot_dir):
    open_game(browser, base_url, "gomoku")
    set_budget(browser, 300)
    cell(browser, 7, 7).click()
    wait(browser, my_turn_or_over)
    grid = board_text(browser)
    assert sum(row.count("X") for row in grid) == 1 and sum(row.count("O") for row in grid) == 1
    assert browser.find_element(By.ID, "r-depth").text.isdigit()
    ghosts = browser.find_elements(By.CSS_SELECTOR, "#board [data-ghost]")
    pv = browser.find_element(By.ID, "r-pv").text.split()
    assert len(ghosts) == len(pv) - 1  # the move played is on the board, the rest are ghosts
    for g in ghosts:
        assert g.text == ""  # a ghost is drawn, never written into the cell
    screenshot(browser, screenshot_dir, "gomoku")


def test_the_engine_move_lists_each_depth_as_the_search_streams_it(browser, base_url, screenshot_dir):
    open_game(browser, base_url, "gomoku")
    set_budget(browser, 600)
    cell(browser, 7, 7).click()
    wait(browser, my_turn_or_over)
    items = browser.find_elements(By.CSS_SELECTOR, "#live li")
    depths = [int(item.get_attribute("data-depth")) for item in items]
    # POST /move with Accept: text/event-stream: one line per completed depth, deepening.
    assert len(depths) >= 2, depths
    assert depths == sorted(set(depths)), depths
    assert depths[-1] == int(browser.find_element(By.ID, "r-depth").text)
    assert all("nodes" in item.text for item in items)
    screenshot(browser, screenshot_dir, "live-progress")


def test_the_gomoku_heat_map_scores_every_empty_cell(browser, base_url, screenshot_dir):
    open_game(browser, base_url, "gomoku")
    set_budget(browser, 300)
    cell(browser, 7, 7).click()
    wait(browser, my_turn_or_over)
    browser.find_element(By.CSS_SELECTOR, "[data-heatmap]").click()
    wait(browser, lambda d: idle(d) and d.find_element(By.ID, "board").get_attribute("data-analysis") == "ready")
    shown = heat_scores(browser)
    grid = board_text(browser)
    empty = {(r, c) for r, row in enumerate(grid) for c, side in enumerate(row) if side == "."}
    assert set(shown) == empty and len(empty) == 15 * 15 - 2
    # The same request again: the server's scores for the same cells. A search stopped by the
    # clock is only reproduced by the cache, which serves it when the first one had its whole
    # budget (on a loaded machine a queued search may not have had it, and is searched anew).
    answer = post_json(base_url, "/move", page_request(browser))
    served = {(m["move"]["row"], m["move"]["col"]): m["score"] for m in answer["analysis"]}
    assert set(served) == set(shown)
    if answer["cached"]:
        assert shown == served
    screenshot(browser, screenshot_dir, "gomoku-heatmap")


def test_an_api_error_is_shown_in_plain_words_next_to_the_board(browser, base_url, screenshot_dir):
    open_game(browser, base_url, "connect4")
    browser.find_element(By.ID, "edit").click()
    cell(browser, 0, 0).click()  # a disc in the top row, over empty cells: it floats
    assert cell(browser, 0, 0).text == "X"
    browser.find_element(By.ID, "hint").click()
    problem = browser.find_element(By.ID, "problem")
    wait(browser, lambda d: idle(d) and problem.is_displayed())
    assert "floats above an empty cell" in problem.text
    assert not browser.find_element(By.ID, "status").text.startswith("Your move")
    # The refusal is in words on the page; the console holds only the browser's own line for
    # the 422 response (source "network"), no error of the page's script.
    errors = console_errors(browser)
    assert errors and all(e["source"] == "network" for e in errors), errors
    screenshot(browser, screenshot_dir, "error")


def test_no_console_errors_and_no_request_to_another_host(browser, base_url):
    open_game(browser, base_url, "tictactoe")
    cell(browser, 1, 1).click()
    wait(browser, my_turn_or_over)
    browser.find_element(By.ID, "compare-run").click()
    wait(browser, lambda d: idle(d) and d.find_element(By.ID, "compare-table").is_displayed())
    browser.find_element(By.ID, "copy-curl").click()
    browser.find_element(By.ID, "copy-json").click()
    open_game(browser, base_url, "connect4")
    browser.find_element(By.CSS_SELECTOR, "[data-heatmap]").click()
    wait(browser, lambda d: idle(d) and d.find_element(By.ID, "board").get_attribute("data-analysis") == "ready")
    open_game(browser, base_url, "gomoku")
    open_game(browser, base_url, "tree")
    wait(browser, lambda d: idle(d) and d.find_elements(By.CSS_SELECTOR, "#tree-drawing [data-node]"))
    browser.find_element(By.ID, "trace-next").click()

    assert console_errors(browser) == []
    urls = requested_urls(browser)
    assert any(u.endswith("/playground/app.js") for u in urls), urls  # the log does record requests
    assert any(u.endswith("/move") for u in urls), urls
    assert foreign(urls, base_url) == []


def test_the_page_fits_a_phone_width(phone, base_url, screenshot_dir):
    for game in ("tictactoe", "connect4", "tree"):
        open_game(phone, base_url, game)
        if game == "connect4":
            phone.find_element(By.CSS_SELECTOR, "[data-heatmap]").click()
            wait(phone, lambda d: idle(d) and d.find_element(By.ID, "board").get_attribute("data-analysis") == "ready")
        if game == "tree":
            wait(phone, lambda d: idle(d) and d.find_elements(By.CSS_SELECTOR, "#tree-drawing [data-node]"))
        overflow = phone.execute_script(
            "return document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        assert overflow <= 0, f"{game}: the page scrolls sideways by {overflow}px"
        screenshot(phone, screenshot_dir, f"phone-{game}")
