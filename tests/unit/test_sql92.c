/* test_sql92.c: the SQL92 filter against RocketMQ 4.9.7's semantics (its
 * filter module: SelectorParser.jj, ComparisonExpression, LogicExpression,
 * UnaryExpression): a table of expressions and messages with the result
 * RocketMQ's broker gives (ExpressionMessageFilter: a message matches only
 * when the expression is TRUE; an exception means no match), and the parse
 * errors with their positions. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "rmq_sql92.h"

/* Builds a properties string from "k=v;k2=v2" into buf. */
static size_t props_of(const char *spec, char *buf, size_t cap)
{
    size_t n = 0;
    for (const char *p = spec; *p && n + 2 < cap; p++) {
        char c = *p == '=' ? '\x01' : *p == ';' ? '\x02' : *p;
        buf[n++] = c;
    }
    buf[n] = 0;
    return n;
}

/* 1 when expr (which must compile) matches a message with props spec. */
static int matches(const char *expr, const char *spec)
{
    char why[256] = "", buf[512];
    rmq_sql92_t *q;
    ck_assert_msg(rmq_sql92_compile(expr, &q, why, sizeof(why)) == RMQ_OK, "%s: %s", expr, why);
    rmq_sql92_props_t p = {buf, props_of(spec, buf, sizeof(buf))};
    int m = rmq_sql92_match(q, rmq_sql92_props_get, &p);
    rmq_sql92_free(q);
    return m;
}

typedef struct row {
    const char *expr;
    const char *props;
    int match;
} row_t;

/* Each row's expected result follows RocketMQ's classes (see above). */
static const row_t rows[] = {
    /* numbers: a property string converted to the constant's type */
    {"a > 5", "a=6", 1},
    {"a > 5", "a=5", 0},
    {"a >= 5", "a=5", 1},
    {"a < 5.5", "a=5", 1},
    {"a <= -1", "a=-1", 1},
    {"a = 3", "a=3", 1},
    {"a = 3", "a=+3", 1},
    {"a = 3", "a=03", 1},
    {"a = 3", "a=3.0", 0},              /* Integer.valueOf("3.0") throws: no match */
    {"a = 3.0", "a=3", 1},              /* Double.valueOf("3") */
    {"a > 1", "a=abc", 0},              /* not a number: no match */
    {"NOT (a > 1)", "a=abc", 0},        /* the exception is not FALSE */
    {"a > 2147483648", "a=2147483649", 1},   /* a Long constant converts with Long.valueOf */
    {"a > 2147483646", "a=2147483648", 0},   /* an Integer one: Integer.valueOf overflows */
    {"a > 1L", "a=5", 1},
    {"a = 100", "a= 100", 0},           /* Integer.valueOf does not trim */
    {"a = 1.5", "a= 1.5", 1},           /* Double.valueOf does */
    {"a = 1.5", "a=1.5f", 1},
    /* two properties: strings compared as Doubles by > and <, as strings by = */
    {"a > b", "a=10;b=9", 1},
    {"a = b", "a=10;b=10.0", 0},
    {"a = b", "a=x;b=x", 1},
    {"a > b", "a=x;b=1", 0},
    /* strings */
    {"s = 'abc'", "s=abc", 1},
    {"s = 'abc'", "s=abd", 0},
    {"s <> 'abc'", "s=abd", 1},
    {"s = 'it''s'", "s=it's", 1},
    {"s = ''", "s=", 1},
    /* missing properties: unknown, so no match either way */
    {"a > 1", "", 0},
    {"NOT (a > 1)", "", 0},
    {"a = 1", "", 0},
    {"a <> 1", "", 0},
    {"a IN ('x')", "", 0},
    {"a NOT IN ('x')", "", 0},
    {"a BETWEEN 1 AND 2", "", 0},
    {"a NOT BETWEEN 1 AND 2", "", 0},
    /* = with one side missing: unknown on the left, FALSE on the right */
    {"a = b", "a=1", 0},
    {"a <> b", "a=1", 1},
    {"a <> b", "b=1", 0},
    /* three-valued AND / OR */
    {"a > 1 OR b = 'x'", "b=x", 1},
    {"a > 1 AND b = 'x'", "b=x", 0},
    {"NOT (a > 1 AND b = 'y')", "b=x", 1},   /* unknown AND FALSE is FALSE */
    {"NOT (a > 1 OR b = 'y')", "b=x", 0},    /* unknown OR FALSE is unknown */
    {"b = 'x' OR a = 3", "b=x;a=zz", 1},     /* OR stops at TRUE: a is never converted */
    {"a = 3 OR b = 'x'", "b=x;a=zz", 0},     /* a's conversion fails first */
    /* precedence: AND before OR, NOT before comparisons */
    {"a = 1 OR b = 1 AND c = 1", "a=1", 1},
    {"(a = 1 OR b = 1) AND c = 1", "a=1", 0},
    {"NOT a = 1", "a=1", 0},            /* (NOT a) = 1: a Boolean is never 1 */
    {"NOT a", "a=1", 1},                /* a property as a boolean: present and not TRUE */
    {"a", "a=true", 0},
    {"a", "", 0},
    /* IS NULL */
    {"a IS NULL", "", 1},
    {"a IS NULL", "a=1", 0},
    {"a IS NOT NULL", "a=1", 1},
    {"a IS NOT NULL", "", 0},
    {"a is not null and a > 0", "a=1", 1},
    /* TRUE, FALSE, NULL */
    {"TRUE", "", 1},
    {"FALSE", "", 0},
    {"NULL", "", 0},
    {"a = TRUE", "a=TRUE", 1},
    {"a = TRUE", "a=yes", 0},
    {"a = FALSE", "a=no", 1},           /* Boolean.valueOf("no") is false */
    {"TRUE = a", "a=true", 0},          /* RocketMQ's ClassCastException */
    {"(a > 1) = TRUE", "a=2", 1},
    {"(a > 1) = 1", "a=2", 0},
    /* IN, NOT IN */
    {"t IN ('x', 'y')", "t=y", 1},
    {"t IN ('x', 'y')", "t=z", 0},
    {"t NOT IN ('x', 'y')", "t=z", 1},
    {"TAGS IN ('TagA', 'TagB')", "TAGS=TagA", 1},
    {"a IN ('1')", "a=1", 1},
    /* BETWEEN, NOT BETWEEN */
    {"a BETWEEN 1 AND 3", "a=3", 1},
    {"a BETWEEN 1 AND 3", "a=4", 0},
    {"a NOT BETWEEN 1 AND 3", "a=4", 1},
    {"a NOT BETWEEN 1 AND 3", "a=2", 0},
    {"a BETWEEN -3 AND -1", "a=-2", 1},
    {"a BETWEEN 5 AND -1", "a=1", 0},   /* a negated bound is not a constant: not checked */
    {"a between 1.5 and 2.5", "a=2", 1},
    /* case, comments, signs, literal forms */
    {"A > 1", "a=2", 0},                /* property names are case-sensitive */
    {"a > 1 -- more\n AND b = 2", "a=2;b=2", 1},
    {"/* c */ a > 1", "a=2", 1},
    {"a > +1", "a=2", 1},
    {"a > - -1", "a=2", 1},
    {"a = .5", "a=0.5", 1},
    {"a = 5.", "a=5", 1},
    {"a = 1E3", "a=1000", 1},
    {"a = 1e-3", "a=0.001", 1},
    /* the parse stops after the first complete expression (RocketMQ) */
    {"a = 1 b = 2", "a=1", 1},
    {"a = 1 )", "a=1", 1},
    /* a negated property is unknown */
    {"-a > 1", "a=-5", 0},
};

START_TEST(test_table)
{
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
        ck_assert_msg(matches(rows[i].expr, rows[i].props) == rows[i].match, "row %zu: %s over {%s}: want %d", i,
                      rows[i].expr, rows[i].props, rows[i].match);
}
END_TEST

typedef struct bad {
    const char *expr;
    const char *why;                    /* a substring of the error */
} bad_t;

static const bad_t bads[] = {
    {"", "line 1, column 1: unexpected end of expression"},
    {"a and between 2 and 10", "line 1, column 7: unexpected 'between'"},
    {"a > ", "line 1, column 5: unexpected end"},
    {"a >\n  # 1", "line 2, column 3: unexpected character '#'"},
    {"a = 'x", "line 1, column 5: string literal not terminated"},
    {"a between 10 and 0", "column 3: illegal values of BETWEEN"},
    {"a between NULL and 0", "cannot be NULL"},
    {"a > 'x'", "column 3: this operand cannot be compared"},
    {"a > TRUE", "cannot be compared"},
    {"(a > 1) > 1", "cannot be compared"},
    {"a = NULL", "column 3: NULL cannot be compared"},
    {"TRUE = 1", "a boolean constant cannot be compared"},
    {"'x' IN ('x')", "IN needs a property"},
    {"a IN (1)", "expected a string literal"},
    {"a IN ()", "expected a string literal"},
    {"3", "will not result in a boolean"},
    {"a > 1 AND 3", "will not result in a boolean"},
    {"a > 100000000000000000000000", "out of range"},
    {"a > 1e999", "greater than the largest Double"},
    {"a > 0.0", "less than the smallest positive Double"},
    {"a IS 1", "expected NULL or NOT NULL"},
    {"a > 1 #", "unexpected character '#'"},
    {"a = 1 NOT #", "unexpected character '#'"},
    {"a > 1 /* open", "unexpected character '/'"},
    {"(a > 1", "expected ')'"},
};

START_TEST(test_errors)
{
    for (size_t i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
        char why[256] = "";
        rmq_sql92_t *q = NULL;
        ck_assert_msg(rmq_sql92_compile(bads[i].expr, &q, why, sizeof(why)) == RMQ_EINVAL, "'%s' compiled",
                      bads[i].expr);
        ck_assert_ptr_null(q);
        ck_assert_msg(strstr(why, bads[i].why) != NULL, "'%s': got '%s', want '%s'", bads[i].expr, why,
                      bads[i].why);
    }
}
END_TEST

/* Deep nesting and huge expressions are refused, not a stack overflow. */
START_TEST(test_bounds)
{
    static char expr[200000];
    char why[256];
    rmq_sql92_t *q;
    size_t n = 0;
    for (int i = 0; i < 100000; i++)
        expr[n++] = '(';
    strcpy(expr + n, "a");
    ck_assert_int_eq(rmq_sql92_compile(expr, &q, why, sizeof(why)), RMQ_EINVAL);
    ck_assert_ptr_nonnull(strstr(why, "nested too deeply"));
    n = 0;
    for (int i = 0; i < 100000; i++)
        expr[n++] = i % 2 ? ' ' : '-';
    strcpy(expr + n, "a > 1");
    ck_assert_int_eq(rmq_sql92_compile(expr, &q, why, sizeof(why)), RMQ_EINVAL);
    n = 0;
    for (int i = 0; i < 5000; i++)
        n += (size_t)sprintf(expr + n, "a = %d OR ", i);
    strcpy(expr + n, "a = 1");
    ck_assert_int_eq(rmq_sql92_compile(expr, &q, why, sizeof(why)), RMQ_EINVAL);
    ck_assert_ptr_nonnull(strstr(why, "too large"));
    n = 0;
    for (int i = 0; i < 60; i++)
        n += (size_t)sprintf(expr + n, "(");
    n += (size_t)sprintf(expr + n, "a = 1");
    for (int i = 0; i < 60; i++)
        n += (size_t)sprintf(expr + n, ")");
    ck_assert_int_eq(matches(expr, "a=1"), 1);
}
END_TEST

START_TEST(test_expr_type)
{
    ck_assert_int_eq(rmq_expr_type_of(NULL), RMQ_EXPR_TAG);
    ck_assert_int_eq(rmq_expr_type_of(""), RMQ_EXPR_TAG);
    ck_assert_int_eq(rmq_expr_type_of("TAG"), RMQ_EXPR_TAG);
    ck_assert_int_eq(rmq_expr_type_of("SQL92"), RMQ_EXPR_SQL92);
    ck_assert_int_eq(rmq_expr_type_of("sql92"), RMQ_EXPR_UNKNOWN);
}
END_TEST

static Suite *sql92_suite(void)
{
    Suite *s = suite_create("sql92");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_table);
    tcase_add_test(tc, test_errors);
    tcase_add_test(tc, test_bounds);
    tcase_add_test(tc, test_expr_type);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(sql92_suite());
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
