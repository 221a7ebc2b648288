// The grammar of nn (SPEC §2-4). Target independent: no actions, predicates
// or members. Newline handling is NOT here: frontend/token_filter.cpp drops
// the NEWLINE tokens that do not end a statement (inside ( ) and [ ], after a
// binary operator or `,`, runs of them) and adds one before a `}` or the end
// of the input where a statement ends there, so the parser sees exactly one
// NEWLINE (or a `;`) after every statement. Bracket matching and nesting
// depth are checked before parsing by frontend/nesting_check.cpp.
grammar NN;

// ---------------------------------------------------------------- statements
// The statement loops are written with the closing token in the same rule
// (EOF, `}`) so that error recovery can skip a bad line and go on.
program  : stmtLine* EOF ;
block    : '{' stmtLine* '}' ;
// A statement and the newline or `;` that ends it, or an empty statement.
stmtLine : stmt? (NEWLINE | ';') ;

stmt
  : letStmt
  | fnDecl
  | graphBlock
  | forStmt
  | whileStmt
  | breakStmt
  | continueStmt
  | returnStmt
  | importStmt
  | exprStmt
  ;

letStmt      : 'let' pattern '=' expr ;
// `fn name(...)` / `graph name(...)`; kind tells which.
fnDecl       : kind=('fn' | 'graph') NAME '(' params? ')' block ;
graphBlock   : 'graph' block ;
forStmt      : 'for' pattern 'in' expr block ;
whileStmt    : 'while' expr block ;
breakStmt    : 'break' ;
continueStmt : 'continue' ;
returnStmt   : 'return' expr? ;
importStmt   : 'import' STRING ('as' NAME)? ;
// An expression statement or an assignment; the AST builder checks that an
// assigned expression is a name, field or index.
exprStmt     : expr (assignOp expr)? ;
assignOp     : '=' | '+=' | '-=' | '*=' | '/=' ;

// A binding: a name or a parenthesised tuple of bindings.
pattern : NAME | '(' (pattern (',' pattern)* trailing=','?)? ')' ;

params : param (',' param)* ','? ;
// `*rest` collects the extra positional arguments into a list (it comes last).
param  : star='*'? NAME ('=' expr)? ;

// ---------------------------------------------------------------- expressions
// One left-recursive rule; alternatives are listed from the highest
// precedence to the lowest (SPEC §4). ANTLR turns this into precedence
// climbing, so a chain `a + b + c` is a loop, not a recursion.
expr
  : primary                                            # primaryExpr
  | expr '(' args? ')'                                 # callExpr
  | expr '[' indexItem (',' indexItem)* ','? ']'       # indexExpr
  | expr '.' NAME                                      # fieldExpr
  | <assoc=right> expr '**' expr                       # powExpr
  | '-' expr                                           # negExpr
  | expr op=('*' | '/' | '//' | '%' | '@') expr        # mulExpr
  | expr op=('+' | '-') expr                           # addExpr
  | expr '..' expr                                     # rangeExpr
  | expr op=('==' | '!=' | '<' | '<=' | '>' | '>=') expr # cmpExpr
  | 'not' expr                                         # notExpr
  | expr 'and' expr                                    # andExpr
  | expr 'or' expr                                     # orExpr
  ;

args : arg (',' arg)* ','? ;
arg  : (NAME '=')? expr ;

// `x[i]`, or a slice `x[a:b:s]` with every part optional. Written so that
// one token of lookahead decides (no scan to a later `:`).
indexItem : expr sliceTail? | sliceTail ;
sliceTail : ':' hi=expr? (':' step=expr?)? ;

primary
  : INT                                                # intLit
  | FLOAT                                              # floatLit
  | STRING                                             # stringLit
  | ('true' | 'false')                                 # boolLit
  | 'none'                                             # noneLit
  | NAME                                               # nameRef
  | '[' (expr (',' expr)* ','?)? ']'                   # listLit
  // `()` and `(a,)` and `(a, b)` are tuples; `(a)` is just `a`.
  | '(' (expr (',' expr)* trailing=','?)? ')'          # parenOrTuple
  // The token filter adds a NEWLINE before a `}` that follows a value.
  | '{' (field (',' field)* ','?)? NEWLINE? '}'        # recordLit
  | 'fn' '(' params? ')' block                         # lambda
  | ifExpr                                             # ifValue
  ;
// `if`: a statement when it stands alone (an expression statement of just
// this), else a value (SPEC §13), which needs both branches, each ending in
// an expression (frontend/ast_builder.cpp, frontend/name_check.cpp). One
// rule for both, so that a statement starting with `if` is never ambiguous.
ifExpr : 'if' expr block (NEWLINE? 'else' (ifExpr | block))? ;
field : NAME ':' expr ;

// ---------------------------------------------------------------- tokens
LET      : 'let' ;
FN       : 'fn' ;
GRAPH    : 'graph' ;
RETURN   : 'return' ;
IF       : 'if' ;
ELSE     : 'else' ;
FOR      : 'for' ;
IN       : 'in' ;
WHILE    : 'while' ;
BREAK    : 'break' ;
CONTINUE : 'continue' ;
IMPORT   : 'import' ;
AS       : 'as' ;
AND      : 'and' ;
OR       : 'or' ;
NOT      : 'not' ;
TRUE     : 'true' ;
FALSE    : 'false' ;
NONE     : 'none' ;

LPAREN   : '(' ;
RPAREN   : ')' ;
LBRACKET : '[' ;
RBRACKET : ']' ;
LBRACE   : '{' ;
RBRACE   : '}' ;
COMMA    : ',' ;
SEMI     : ';' ;
COLON    : ':' ;
DOTDOT   : '..' ;
DOT      : '.' ;
POW      : '**' ;
PLUS     : '+' ;
MINUS    : '-' ;
STAR     : '*' ;
SLASH    : '/' ;
FLOORDIV : '//' ;
PERCENT  : '%' ;
AT       : '@' ;
EQ       : '==' ;
NE       : '!=' ;
LE       : '<=' ;
LT       : '<' ;
GE       : '>=' ;
GT       : '>' ;
ASSIGN   : '=' ;
PLUS_ASSIGN  : '+=' ;
MINUS_ASSIGN : '-=' ;
STAR_ASSIGN  : '*=' ;
SLASH_ASSIGN : '/=' ;

// No float has a trailing dot, so `0..n` lexes as INT `..` NAME.
FLOAT : DIGITS '.' DIGITS EXPONENT? | '.' DIGITS EXPONENT? | DIGITS EXPONENT ;
INT   : DIGITS ;
fragment DIGITS   : [0-9]+ ;
fragment EXPONENT : [eE] [+-]? DIGITS ;

NAME : [A-Za-z_] [A-Za-z0-9_]* ;

// Escapes are decoded (and unknown ones reported) by the AST builder.
STRING : '"' (ESCAPE | ~["\\\r\n])* '"' ;
// A string with no closing quote before the end of the line or file; the
// parser front reports it and parses on as if it were closed.
UNTERMINATED_STRING : '"' (ESCAPE | ~["\\\r\n])* '\\'? ;
fragment ESCAPE : '\\' ~[\r\n] ;

NEWLINE : '\r'? '\n' ;
// U+FEFF: a byte order mark at the start of a file is blank space.
WS      : [ \t\r\f\uFEFF]+ -> skip ;
COMMENT : '#' ~[\r\n]* -> skip ;

// Anything else: reported as `unexpected character` by the parser front, so
// the lexer itself never fails.
BAD_CHAR : . ;
