use kibitz::engine::{Game, SearchLimits, SearchOptions, Side, TranspositionTable};
use kibitz::games::BoardGame;
use kibitz::games::gomoku::{Gomoku, GomokuRules};
use std::time::Duration;

#[test]
fn replay() {
    let moves = std::env::var("MOVES").unwrap();
    let kib_black = std::env::var("BLACK").is_ok();
    let opening = std::env::var("OPEN").unwrap().parse::<usize>().unwrap();
    let mut p = Gomoku::new(15, 15, GomokuRules::default()).unwrap();
    let table = TranspositionTable::with_megabytes(32);
    for (i, t) in moves.split_whitespace().enumerate() {
        let (x, y) = t.split_once(',').unwrap();
        let mv = p.move_at(y.parse().unwrap(), x.parse().unwrap());
        let kib = (p.side_to_move() == Side::First) == kib_black;
        if i >= opening && kib {
            let r = p.think(
                &SearchLimits::with_budget(Duration::from_millis(200)),
                SearchOptions::default(),
                &table,
            );
            let c = p.cell_of(r.best_move.unwrap());
            println!(
                "ply {i}: played {t} think {},{} score {} depth {} proof {:?} nodes {}",
                c.col, c.row, r.score, r.depth, r.proof, r.nodes
            );
            if r.score < -300 {
                println!("{:?}", p);
            }
        }
        p.make(mv);
    }
    println!("{:?}", p);
}
