"""The playground for players in a real browser: sparring at a level, the game review, the
coordinates on the board's edges and a report that describes only the search on screen. Each
test drives the page through its hooks (data-level, data-review, data-ply, data-cell,
data-mark, data-first-change, data-coord) and checks it against the API's own answers."""

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from conftest import (
    board_text,
    cell,
    idle,
    my_turn_or_over,
    open_game,
    post_json,
    screenshot,
    set_budget,
    set_field,
    wait,
)

LINES = (
    [[(r, c) for c in range(3)] for r in range(3)]
    + [[(r, c) for r in range(3)] for c in range(3)]
    + [[(i, i) for i in range(3)], [(i, 2 - i) for i in range(3)]]
)
PREFERENCE = [(1, 1), (0, 0), (0, 2), (2, 0), (2, 2), (0, 1), (1, 0), (1, 2), (2, 1)]


def tictactoe_move(grid):
    """A simple player for X: win, else block, else the centre, a corner, an edge."""
    for side in ("X", "O"):
        for line in LINES:
            values = [grid[r][c] for r, c in line]
            if values.count(side) == 2 and values.count(".") == 1:
                return line[values.index(".")]
    return next(rc for rc in PREFERENCE if grid[rc[0]][rc[1]] == ".")


def name_of(row, col, rows):
    """A cell's name as players read it: column letter, then the row counted from the bottom."""
    return f"{chr(97 + col)}{rows - row}"


def review_done(driver):
    return idle(driver) and driver.find_element(By.ID, "review").get_attribute("data-state") == "done"


def shown_plies(driver):
    """The review's move list as the page shows it: (ply, cell, mark, first change?)."""
    return driver.execute_script(
        "return [...document.querySelectorAll('#review [data-ply]')].map(p => "
        "[Number(p.dataset.ply), p.dataset.cell, p.dataset.mark, 'firstChange' in p.dataset])"
    )


def expected_plies(answer):
    first = (answer["first_outcome_change"] or {}).get("ply")
    return [
        [p["ply"], f"{p['played']['row']},{p['played']['col']}", p["mark"], p["ply"] == first]
        for p in answer["plies"]
    ]


def paste_and_review(driver, text):
    driver.find_element(By.CSS_SELECTOR, "#review-paste summary").click()
    field = driver.find_element(By.ID, "review-moves-text")
    field.clear()
    field.send_keys(text)
    driver.find_element(By.ID, "review-pasted").click()
    wait(driver, review_done, 60, "the review did not finish")


def test_a_level_1_game_against_kibitz_is_won_by_clicks_and_then_reviewed(browser, base_url, screenshot_dir):
    open_game(browser, base_url, "tictactoe")
    level = Select(browser.find_element(By.CSS_SELECTOR, "[data-level]"))
    assert [o.get_attribute("value") for o in level.options] == [str(n) for n in range(1, 11)]
    assert level.first_selected_option.get_attribute("value") == "10"
    level.select_by_value("1")
    # The tooltip says what level 1 means in this game, from GET /games.
    tooltip = browser.find_element(By.ID, "level-label").get_attribute("title")
    assert tooltip.startswith("Level 1: looks at most 1 ply ahead with 4% of the budget"), tooltip
    # Seed 1 fixes kibitz's draws: this game is the same on every run (and X wins it).
    set_field(browser, "seed", 1)
    browser.find_element(By.ID, "new-game").click()
    wait(browser, my_turn_or_over)
    assert "against kibitz at level 1" in browser.find_element(By.ID, "status").text
    board = browser.find_element(By.ID, "board")
    played = []
    verdicts = []  # the heat map's verdict at each of X's turns

    def play(row, col):
        before = board_text(browser)
        cell(browser, row, col).click()
        wait(browser, my_turn_or_over)
        after = board_text(browser)
        played.append((row, col))
        played.extend((r, c) for r in range(3) for c in range(3) if before[r][c] == "." and after[r][c] == "O")

    play(*tictactoe_move(board_text(browser)))
    # The report says which search it shows: kibitz's own, at the level and seed asked.
    assert browser.find_element(By.ID, "r-search").text == "kibitz's move (O) at level 1, seed 1"
    assert "kibitz (O)" in browser.find_element(By.ID, "r-verdict").text
    browser.find_element(By.CSS_SELECTOR, "[data-heatmap]").click()
    while not board.get_attribute("data-result"):
        wait(browser, lambda d: my_turn_or_over(d) and (board.get_attribute("data-result") or board.get_attribute("data-analysis") == "ready"))
        if board.get_attribute("data-result"):
            break
        assert browser.find_element(By.ID, "r-search").text.startswith("heat map: every move you (X)")
        verdicts.append(browser.find_element(By.ID, "r-verdict").text)
        # The heat map's best cell is the report's move.
        best = browser.find_element(By.CSS_SELECTOR, "#board .best")
        row, col = int(best.get_attribute("data-row")), int(best.get_attribute("data-col"))
        assert name_of(row, col, 3) == browser.find_element(By.ID, "r-move").text.split()[0]
        # The best line's numbered ghosts sit on a white disc, readable on any heat colour.
        ghost_disc = browser.execute_script(
            "const g = document.querySelector('#board [data-ghost]');"
            "return g && getComputedStyle(g, '::before').backgroundColor"
        )
        assert ghost_disc in (None, "rgba(255, 255, 255, 0.92)"), ghost_disc
        play(*tictactoe_move(board_text(browser)))
    assert board.get_attribute("data-result") == "X", board_text(browser)
    # Once kibitz's weak replies let X win by force, the verdict says so in good grammar.
    assert any(v.startswith("you (X) win in ") for v in verdicts), verdicts
    assert "you win" in browser.find_element(By.ID, "status").text

    # The review of the game just played: the same marks POST /review gives for its moves.
    browser.find_element(By.CSS_SELECTOR, "[data-review]").click()
    wait(browser, review_done, 60, "the review did not finish")
    answer = post_json(base_url, "/review", {"game": "tictactoe", "moves": [{"row": r, "col": c} for r, c in played]})
    assert shown_plies(browser) == expected_plies(answer)
    assert len(browser.find_elements(By.CSS_SELECTOR, "#review-graph circle")) == len(played)
    screenshot(browser, screenshot_dir, "level1-review")


def test_the_review_of_a_known_tictactoe_game_shows_the_marks_post_review_returns(browser, base_url, screenshot_dir):
    open_game(browser, base_url, "tictactoe")
    # b2 b3 a3 c1 a1 a2 c3: O's b3 throws the draw away, X wins with the double threat.
    names = "b2 b3 a3 c1 a1 a2 c3".split()
    moves = [{"row": 3 - int(n[1]), "col": ord(n[0]) - 97} for n in names]
    paste_and_review(browser, " ".join(names))
    answer = post_json(base_url, "/review", {"game": "tictactoe", "moves": moves})
    assert answer["first_outcome_change"]["ply"] == 2
    shown = shown_plies(browser)
    assert shown == expected_plies(answer)
    first = browser.find_element(By.CSS_SELECTOR, "#review [data-first-change]")
    assert first.get_attribute("data-ply") == "2"
    assert "turned a draw into a loss in 6" in first.text

    # A click on ply 2 shows the position before it, with the best and the played move.
    first.find_element(By.TAG_NAME, "button").click()
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#board [data-review-move]"))
    assert board_text(browser) == ["...", ".X.", "..."]
    marked = {
        c.get_attribute("data-review-move"): (int(c.get_attribute("data-row")), int(c.get_attribute("data-col")))
        for c in browser.find_elements(By.CSS_SELECTOR, "#board [data-review-move]")
    }
    ply = answer["plies"][1]
    assert marked == {"played": (0, 1), "best": (ply["best"]["row"], ply["best"]["col"])}
    assert "O played b3" in browser.find_element(By.ID, "status").text
    screenshot(browser, screenshot_dir, "review-tictactoe")
    browser.find_element(By.ID, "review-back").click()
    assert board_text(browser) == ["...", "...", "..."]
    assert not browser.find_elements(By.CSS_SELECTOR, "#board [data-review-move]")


def shown_summary(driver):
    """The review's summary as the page shows it: {player: {field: text}}."""
    return driver.execute_script(
        "const s = {X: {}, O: {}};"
        "for (const td of document.querySelectorAll('#review-summary td[data-summary]'))"
        "  s[td.dataset.player][td.dataset.summary] = td.textContent;"
        "return s;"
    )


def test_the_review_summary_beside_the_graph_shows_what_post_review_counts(browser, base_url, screenshot_dir):
    open_game(browser, base_url, "tictactoe")
    # O's b3 throws the draw away; X's moves are all best.
    names = "b2 b3 a3 c1 a1 a2 c3".split()
    moves = [{"row": 3 - int(n[1]), "col": ord(n[0]) - 97} for n in names]
    paste_and_review(browser, " ".join(names))
    answer = post_json(base_url, "/review", {"game": "tictactoe", "moves": moves})
    summary = browser.find_element(By.ID, "review-summary")
    assert summary.is_displayed()
    expected = {
        player: {
            key: ("–" if value is None else f"{value:.1f}" if key == "accuracy" else str(value))
            for key, value in answer["summary"][player].items()
            if key != "moves"
        }
        for player in ("X", "O")
    }
    assert shown_summary(browser) == expected
    assert expected["X"]["accuracy"] == "100.0" and expected["O"]["blunder"] == "1"
    # Beside the score graph: the two share a row of the page.
    graph = browser.find_element(By.ID, "review-graph").rect
    table = summary.rect
    assert table["x"] >= graph["x"] + graph["width"] - 1, (graph, table)
    assert table["y"] < graph["y"] + graph["height"], (graph, table)
    screenshot(browser, screenshot_dir, "review-summary")


def test_the_review_of_a_known_connect4_game_shows_the_marks_post_review_returns(browser, base_url, screenshot_dir):
    open_game(browser, base_url, "connect4")
    # Columns d c d d c e b (0-based 3 2 3 3 2 4 1): X's third disc throws a win away.
    paste_and_review(browser, "d c d d c e b")
    answer = post_json(base_url, "/review", {"game": "connect4", "moves": [3, 2, 3, 3, 2, 4, 1]})
    assert answer["first_outcome_change"]["ply"] == 3
    shown = shown_plies(browser)
    assert shown == expected_plies(answer)
    # Connect-4's cells too are the API's 0-based {row, col}: the first disc lands on row 5.
    assert shown[0][1] == "5,3"
    first = browser.find_element(By.CSS_SELECTOR, "#review [data-first-change]")
    assert first.get_attribute("data-ply") == "3"
    assert "threw away a win in 37" in first.text
    # The graph: one dot per ply, coloured by its mark, and the first change drawn.
    dots = browser.find_elements(By.CSS_SELECTOR, "#review-graph circle")
    assert [d.get_attribute("class") for d in dots] == [f"dot mark-{p['mark']}" for p in answer["plies"]]
    assert browser.find_elements(By.CSS_SELECTOR, "#review-graph .first-change")
    dots[4].click()
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#board [data-review-move]"))
    grid = board_text(browser)
    assert sum(row.count("X") + row.count("O") for row in grid) == 4
    screenshot(browser, screenshot_dir, "review-connect4")


def test_the_coordinates_on_the_edges_name_the_cells_of_the_best_line(browser, base_url, screenshot_dir):
    open_game(browser, base_url, "connect4")
    files = [s.text for s in browser.find_elements(By.CSS_SELECTOR, "#files [data-coord]")]
    ranks = [s.text for s in browser.find_elements(By.CSS_SELECTOR, "#ranks [data-coord]")]
    assert files == list("abcdefg")
    assert ranks == ["6", "5", "4", "3", "2", "1"]  # top to bottom: the bottom row is 1
    for s in browser.find_elements(By.CSS_SELECTOR, "[data-coord]"):
        assert s.get_attribute("data-coord") == s.text
    set_budget(browser, 300)
    cell(browser, 0, 3).click()
    wait(browser, my_turn_or_over)
    pv = browser.find_element(By.ID, "r-pv").text.split()
    assert len(pv) >= 2, pv

    # Each cell of the best line, named by the labels that line up with it on the edges.
    def edge_name(element):
        return browser.execute_script(
            """const box = arguments[0].getBoundingClientRect();
            const inside = (lo, hi, v) => v >= lo && v <= hi;
            const centre = (e, axis) => { const b = e.getBoundingClientRect();
              return axis === 'x' ? (b.left + b.right) / 2 : (b.top + b.bottom) / 2; };
            const file = [...document.querySelectorAll('#files [data-coord]')]
              .find(e => inside(box.left, box.right, centre(e, 'x')));
            const rank = [...document.querySelectorAll('#ranks [data-coord]')]
              .find(e => inside(box.top, box.bottom, centre(e, 'y')));
            return file.dataset.coord + rank.dataset.coord;""",
            element,
        )

    played = browser.find_element(By.CSS_SELECTOR, "#board .cell.last")
    assert edge_name(played) == pv[0]
    ghosts = browser.find_elements(By.CSS_SELECTOR, "#board [data-ghost]")
    assert len(ghosts) == len(pv) - 1
    for g in ghosts:
        assert edge_name(g) == pv[int(g.get_attribute("data-ghost"))]
        # The cell's label for screen readers uses the same name.
        assert g.get_attribute("aria-label").startswith(pv[int(g.get_attribute("data-ghost"))] + ":")
    screenshot(browser, screenshot_dir, "connect4-coordinates")


def test_after_switching_games_the_report_holds_only_the_new_search(browser, base_url):
    open_game(browser, base_url, "gomoku")
    set_budget(browser, 450)  # a request no other test makes: searched, not from the cache
    cell(browser, 6, 8).click()
    wait(browser, my_turn_or_over)
    assert browser.find_elements(By.CSS_SELECTOR, "#live li")
    browser.find_element(By.CSS_SELECTOR, '[data-game="tictactoe"]').click()
    wait(browser, lambda d: d.find_element(By.ID, "board").get_attribute("data-game") == "tictactoe")
    # Nothing of the gomoku search is left: no fields, no depth list, no heading.
    assert browser.find_element(By.ID, "report-empty").is_displayed()
    assert not browser.find_element(By.ID, "report-fields").is_displayed()
    assert not browser.find_elements(By.CSS_SELECTOR, "#live li")
    assert not browser.find_element(By.ID, "live-title").is_displayed()

    cell(browser, 1, 1).click()
    wait(browser, my_turn_or_over)
    names = {name_of(r, c, 3) for r in range(3) for c in range(3)}
    items = browser.find_elements(By.CSS_SELECTOR, "#live li")
    if "from the answer cache" in browser.find_element(By.ID, "r-move").text:
        # A cached answer streams no depths: no list, and no empty heading either.
        assert not items and not browser.find_element(By.ID, "live-title").is_displayed()
    else:
        assert items, "kibitz's tic-tac-toe search lists its depths"
        assert all(i.text.split()[2] in names for i in items), [i.text for i in items]
        assert items[-1].get_attribute("data-depth") == browser.find_element(By.ID, "r-depth").text
    assert browser.find_element(By.ID, "r-search").text.startswith("kibitz's move (O)")
    assert browser.find_element(By.ID, "r-move").text.split()[0] in names

    # The heat map's analysis is a search of its own: the depth list of kibitz's goes.
    browser.find_element(By.CSS_SELECTOR, "[data-heatmap]").click()
    wait(browser, lambda d: idle(d) and d.find_element(By.ID, "board").get_attribute("data-analysis") == "ready")
    assert browser.find_element(By.ID, "r-search").text.startswith("heat map")
    assert not browser.find_elements(By.CSS_SELECTOR, "#live li")
    assert not browser.find_element(By.ID, "live-title").is_displayed()


def test_settings_outside_the_limits_of_get_games_are_refused_in_words(browser, base_url):
    open_game(browser, base_url, "connect4")
    problem = browser.find_element(By.ID, "problem")
    status = browser.find_element(By.ID, "status")
    set_field(browser, "rows", 99)
    browser.find_element(By.ID, "cols").click()  # leaving the field applies it
    wait(browser, lambda d: problem.is_displayed())
    assert "Rows: 99 is not a board size of Connect-4; it takes 4 to 15 rows." in problem.text
    assert not status.text.startswith("Your move"), status.text
    assert len(board_text(browser)) == 6  # the game on the board is kept
    set_field(browser, "rows", 10)
    set_field(browser, "cols", 9)
    browser.find_element(By.ID, "budget").click()
    wait(browser, lambda d: "Columns: 9 is not a board size of Connect-4; it takes 4 to 5 columns with 10 rows." in problem.text)
    set_field(browser, "rows", 6)
    set_field(browser, "cols", 7)
    browser.find_element(By.ID, "budget").click()
    wait(browser, lambda d: not problem.is_displayed())
    assert status.text.startswith("Your move")

    # A budget of 0 is neither replaced by the default nor sent: the page says what it takes,
    # and no move is played until it is mended.
    set_budget(browser, 0)
    browser.find_element(By.ID, "rows").click()
    wait(browser, lambda d: problem.is_displayed())
    assert "Budget: 0 ms is out of range; give 1 to 60,000 ms." in problem.text
    assert browser.find_element(By.ID, "budget").get_attribute("aria-invalid") == "true"
    assert not status.text.startswith("Your move")
    cell(browser, 0, 3).click()
    assert board_text(browser) == ["......."] * 6
    set_budget(browser, 99999999)
    browser.find_element(By.ID, "rows").click()
    wait(browser, lambda d: "Budget: 99999999 ms is out of range" in problem.text)
    set_budget(browser, 300)
    browser.find_element(By.ID, "rows").click()
    wait(browser, lambda d: not problem.is_displayed())
    cell(browser, 0, 3).click()
    wait(browser, my_turn_or_over)
    assert sum(row.count("O") for row in board_text(browser)) == 1
