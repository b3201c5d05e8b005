// Asks OpenTafl's own rules engine whether a Black move captures the King, once per King
// strength setting (`ks:`), for the cases scripts/opentafl-king-check.sh generates. Built
// against an OpenTafl build together with RulesCheck.java (whose helpers it uses); no
// OpenTafl code is part of this file.
//
//   java -cp OPENTAFL_CLASSES:. KingCheck CASES.tsv BASE_RULES KS...
//
// CASES.tsv: `POSITION<TAB>MOVE` a line, POSITION in RULES.md notation with Black to move.
// BASE_RULES: an OTN rules string whose `ks:` is replaced by each KS given. Output: the
// case followed by one column a KS, 1 where OpenTafl takes the King off the board after the
// move, 0 where it does not; a case OpenTafl refuses stops the run (exit 1).

import com.manywords.softworks.tafl.engine.Game;
import com.manywords.softworks.tafl.engine.GameState;
import com.manywords.softworks.tafl.engine.MoveRecord;
import com.manywords.softworks.tafl.rules.Coord;

import java.io.BufferedReader;
import java.io.FileReader;
import java.util.ArrayList;
import java.util.List;

public class KingCheck {
    public static void main(String[] args) throws Exception {
        if (args.length < 3) {
            System.err.println("usage: KingCheck CASES.tsv BASE_RULES KS...");
            System.exit(2);
        }
        Coord.initialize();
        List<String> rules = new ArrayList<>();
        for (int i = 2; i < args.length; i++) {
            rules.add(args[1].replaceAll("\\bks:\\S*", "").trim() + " ks:" + args[i]);
        }
        try (BufferedReader r = new BufferedReader(new FileReader(args[0]))) {
            String line;
            int n = 0;
            while ((line = r.readLine()) != null) {
                n++;
                if (line.trim().isEmpty()) continue;
                String[] parts = line.split("\t");
                String[] sq = parts[1].split("-");
                StringBuilder out = new StringBuilder(parts[0] + "\t" + parts[1]);
                for (String rule : rules) {
                    Game game = RulesCheck.gameAt(rule, parts[0]);
                    GameState state = game.getCurrentState();
                    int result = state.makeMove(new MoveRecord(Coord.get(sq[0]), Coord.get(sq[1])));
                    if (result < GameState.LOWEST_NONERROR_RESULT) {
                        System.err.println(args[0] + ":" + n + ": OpenTafl refuses " + parts[1]
                                + " in " + parts[0] + " under " + rule + " (result " + result + ")");
                        System.exit(1);
                    }
                    String board = game.getCurrentState().getOTNPositionString();
                    out.append('\t').append(board.indexOf('K') < 0 ? '1' : '0');
                }
                System.out.println(out);
            }
        }
    }
}
