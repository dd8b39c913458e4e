//! The piskvork protocol, as conversations over in-memory buffers.

use kibitz::engine::MATE_BOUND;
use kibitz::tools::pbrain::{run_pbrain, run_pbrain_with};

/// Runs a whole session and returns the output lines, `MESSAGE` lines included.
fn converse_verbose(input: &str) -> Vec<String> {
    let mut output = Vec::new();
    run_pbrain(input.as_bytes(), &mut output).expect("session");
    String::from_utf8(output)
        .expect("utf-8")
        .lines()
        .map(str::to_string)
        .collect()
}

/// Runs a whole session and returns the answers (without the informative `MESSAGE` lines).
fn converse(input: &str) -> Vec<String> {
    converse_verbose(input)
        .into_iter()
        .filter(|line| !line.starts_with("MESSAGE"))
        .collect()
}

#[test]
fn every_move_is_preceded_by_a_message_with_the_search_figures() {
    let out = converse_verbose("START 15\nINFO timeout_turn 50\nTURN 7,7\nEND\n");
    assert_eq!(out.len(), 3, "{out:?}");
    assert!(out[1].starts_with("MESSAGE depth "), "{out:?}");
    assert!(
        out[1].contains(" nodes ") && out[1].contains(" pv "),
        "{out:?}"
    );
    assert!(!out[2].starts_with("MESSAGE"));
}

fn parse_move(line: &str) -> (usize, usize) {
    let (x, y) = line.split_once(',').expect("x,y");
    (x.parse().expect("x"), y.parse().expect("y"))
}

#[test]
fn start_then_begin_opens_in_the_centre() {
    let out = converse("START 15\nINFO timeout_turn 50\nBEGIN\nEND\n");
    assert_eq!(out, vec!["OK", "7,7"]);
}

#[test]
fn rectstart_accepts_rectangles() {
    let out = converse("RECTSTART 20,15\nINFO timeout_turn 50\nBEGIN\nEND\n");
    assert_eq!(out, vec!["OK", "10,7"]);
}

#[test]
fn turn_answers_with_a_legal_move_near_the_stones() {
    let out = converse("START 15\nINFO timeout_turn 50\nTURN 7,7\nEND\n");
    assert_eq!(out[0], "OK");
    let (x, y) = parse_move(&out[1]);
    assert!((x, y) != (7, 7));
    assert!(x.abs_diff(7) <= 2 && y.abs_diff(7) <= 2);
}

#[test]
fn board_positions_are_completed_when_we_have_four() {
    // Our stones (1) at x = 3..=6 on row 5; the opponent (2) elsewhere.
    let input = "START 15\nINFO timeout_turn 50\nBOARD\n3,5,1\n3,9,2\n4,5,1\n4,9,2\n5,5,1\n5,9,2\n6,5,1\n10,9,2\nDONE\nEND\n";
    let out = converse(input);
    assert_eq!(out[0], "OK");
    assert!(["2,5", "7,5"].contains(&out[1].as_str()), "{out:?}");
}

#[test]
fn board_positions_block_the_opponents_four() {
    let input = "START 15\nINFO timeout_turn 50\nBOARD\n3,5,2\n3,9,1\n4,5,2\n12,12,1\n5,5,2\n2,5,1\n6,5,2\nDONE\nEND\n";
    let out = converse(input);
    assert_eq!(out[1], "7,5", "{out:?}");
}

#[test]
fn exactly_five_rule_is_taken_from_info() {
    // Our five would be an overline at 3,5 under rule 1, so we must not rely on it: the only
    // five is at 8,5 (x = 4..=7 plus 8 makes exactly five with 9,5 empty).
    let input = "START 15\nINFO rule 1\nINFO timeout_turn 50\nBOARD\n1,5,1\n0,0,2\n2,5,1\n0,2,2\n4,5,1\n0,4,2\n5,5,1\n14,14,2\n6,5,1\n14,12,2\n7,5,1\n12,14,2\nDONE\nEND\n";
    let out = converse(input);
    assert_eq!(out[1], "8,5", "{out:?}");
}

#[test]
fn about_names_the_engine() {
    let out = converse("ABOUT\nEND\n");
    assert!(out[0].starts_with("name=\"kibitz\""));
}

#[test]
fn bad_input_gets_error_or_unknown() {
    let out = converse("START 3\nSTART 15\nTURN 99,99\nTURN x\nFROBNICATE\nEND\n");
    assert!(out[0].starts_with("ERROR"), "{out:?}");
    assert_eq!(out[1], "OK");
    assert!(out[2].starts_with("ERROR"));
    assert!(out[3].starts_with("ERROR"));
    assert!(out[4].starts_with("UNKNOWN"));
}

#[test]
fn turn_on_an_occupied_cell_is_an_error() {
    let out = converse("START 15\nINFO timeout_turn 30\nBEGIN\nTURN 7,7\nEND\n");
    assert!(out[2].starts_with("ERROR"), "{out:?}");
}

#[test]
fn end_stops_the_session() {
    let out = converse("START 15\nEND\nABOUT\n");
    assert_eq!(out, vec!["OK"]);
}

#[test]
fn restart_clears_the_board() {
    let out = converse("START 15\nINFO timeout_turn 30\nBEGIN\nRESTART\nBEGIN\nEND\n");
    assert_eq!(out, vec!["OK", "7,7", "OK", "7,7"]);
}

/// Our (black) stones make a double three at 4,4; white is far away.
const DOUBLE_THREE_BOARD: &str =
    "BOARD\n4,2,1\n10,10,2\n4,3,1\n12,11,2\n2,4,1\n9,12,2\n3,4,1\n14,13,2\nDONE\n";

#[test]
fn free_style_plays_the_winning_double_three() {
    let input = format!("START 15\nINFO rule 0\nINFO timeout_turn 200\n{DOUBLE_THREE_BOARD}END\n");
    assert_eq!(converse(&input)[1], "4,4");
}

#[test]
fn renju_rule_4_keeps_black_off_the_forbidden_double_three() {
    let input = format!("START 15\nINFO rule 4\nINFO timeout_turn 200\n{DOUBLE_THREE_BOARD}END\n");
    let out = converse(&input);
    assert_ne!(out[1], "4,4", "{out:?}");
    parse_move(&out[1]);
}

#[test]
fn thread_num_gives_the_search_helper_threads_and_the_message_says_how_many() {
    let one = converse_verbose("START 15\nINFO timeout_turn 50\nTURN 7,7\nEND\n");
    assert!(one[1].contains(" threads 1 "), "{one:?}");
    let two =
        converse_verbose("START 15\nINFO thread_num 2\nINFO timeout_turn 50\nTURN 7,7\nEND\n");
    assert!(two[1].contains(" threads 2 "), "{two:?}");
    let many =
        converse_verbose("START 15\nINFO thread_num 1000\nINFO timeout_turn 50\nTURN 7,7\nEND\n");
    assert!(many[1].contains(" threads 8 "), "{many:?}");
}

#[test]
fn with_helper_threads_the_opponents_four_is_still_blocked() {
    let input = "START 15\nINFO thread_num 2\nINFO timeout_turn 100\nBOARD\n3,5,2\n3,9,1\n4,5,2\n12,12,1\n5,5,2\n2,5,1\n6,5,2\nDONE\nEND\n";
    let out = converse(input);
    assert_eq!(out[1], "7,5", "{out:?}");
}

/// The moves and the (node count, score) of each search of a session with a node budget a
/// move.
fn converse_with_nodes(input: &str, nodes: u64) -> (Vec<String>, Vec<(u64, i64)>) {
    let mut output = Vec::new();
    run_pbrain_with(input.as_bytes(), &mut output, 1, Some(nodes)).expect("session");
    let lines: Vec<String> = String::from_utf8(output)
        .expect("utf-8")
        .lines()
        .map(str::to_string)
        .collect();
    // The number after `word` in a line.
    let after = |line: &str, word: &str| -> Option<i64> {
        let rest = line.split(word).nth(1)?;
        Some(rest.split(' ').next()?.parse().expect("a number"))
    };
    let counts = lines
        .iter()
        .filter_map(|line| {
            let nodes = after(line, " nodes ")?;
            Some((nodes as u64, after(line, " score ").expect("a score")))
        })
        .collect();
    let moves = lines
        .into_iter()
        .filter(|l| !l.starts_with("MESSAGE"))
        .collect();
    (moves, counts)
}

#[test]
fn a_node_budget_replaces_the_clock_and_gives_the_same_moves_every_time() {
    // A turn of 1 ms: the clock alone would stop every search at once. With a node budget the
    // searches run to it (far more nodes than 1 ms allows on this machine), or stop earlier
    // at a forced win they found, and two sessions on the same moves answer the same moves
    // with the same counts. The opponent's turns are corners, which no search plays in this
    // opening (a cell near the stones may be the engine's own answer, and then the turn is
    // illegal); the second corner leaves the engine a forced win.
    let input = "START 15\nINFO timeout_turn 1\nBOARD\n7,7,2\n8,8,1\n6,8,2\nDONE\nTURN 0,14\nTURN 14,0\nEND\n";
    let (moves, counts) = converse_with_nodes(input, 30_000);
    assert_eq!(moves.len(), 4, "{moves:?}");
    assert_eq!(counts.len(), 3, "{counts:?}");
    for &(count, score) in &counts {
        // The main search stops within a poll interval of the budget; the root's threat
        // searches have their own share of it.
        assert!(count <= 60_000, "{counts:?}");
        // Or it found a win (one the exact search did not confirm is reported just inside
        // `MATE_BOUND`) and stopped there.
        assert!(
            count >= 10_000 || score >= i64::from(MATE_BOUND - 1),
            "{counts:?}"
        );
    }
    assert!(
        counts.iter().any(|&(count, _)| count >= 10_000),
        "{counts:?}"
    );
    assert_eq!(converse_with_nodes(input, 30_000), (moves, counts));
}
