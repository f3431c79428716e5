/* config — YAML text to a CfgNode tree (cfg.h). The only file that sees
 * libyaml. Aliases and anchors are refused (a scenario must read the
 * same top to bottom), as are duplicate keys and empty documents. */
#include "io/cfg.h"

#include <yaml.h>

#include <stdio.h>
#include <string.h>

typedef struct {
    yaml_parser_t parser;  /* libyaml event parser */
    const char *file;      /* interned source name */
    const char *text;      /* the whole input (for positions of reader errors); not owned */
    char *err;             /* first error; owned */
} Reader;

/* The 1-based line and column (in characters) of byte offset off of text. */
static void offset_position(const char *text, size_t off, int *line, int *col)
{
    *line = 1;
    *col = 1;
    for (size_t i = 0; i < off && text[i]; i++) {
        if (text[i] == '\n') {
            (*line)++;
            *col = 1;
        } else if (((unsigned char)text[i] & 0xC0) != 0x80) {
            (*col)++;
        }
    }
}

static CfgNode *node_new(CfgType type, const char *file, const yaml_mark_t *m)
{
    CfgNode *n = g_new0(CfgNode, 1);
    n->type = type;
    n->file = file;
    n->line = (int)m->line + 1;
    n->col = (int)m->column + 1;
    if (type != CFG_SCALAR)
        n->items = g_ptr_array_new_with_free_func((GDestroyNotify)cfg_free);
    if (type == CFG_MAP)
        n->keys = g_ptr_array_new_with_free_func((GDestroyNotify)cfg_free);
    return n;
}

static void reader_fail_at(Reader *r, const yaml_mark_t *m, const char *what)
{
    if (!r->err)
        r->err = g_strdup_printf("%s:%d:%d: %s", r->file, (int)m->line + 1, (int)m->column + 1, what);
}

/* Records libyaml's failure: a reader error (bad encoding) has only a byte
 * offset, a scanner or parser error a mark. */
static void reader_syntax_error(Reader *r)
{
    const yaml_parser_t *p = &r->parser;
    int line = (int)p->problem_mark.line + 1, col = (int)p->problem_mark.column + 1;
    if (p->error == YAML_READER_ERROR)
        offset_position(r->text, p->problem_offset, &line, &col);
    if (!r->err)
        r->err = g_strdup_printf("%s:%d:%d: YAML syntax error: %s; expected well-formed YAML", r->file, line, col,
                                 p->problem ? p->problem : "malformed input");
}

static CfgNode *read_node(Reader *r, yaml_event_t *ev, int depth);

/* Reads the items of a collection until its end event. */
static bool read_children(Reader *r, CfgNode *n, int depth)
{
    for (;;) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&r->parser, &ev)) {
            reader_syntax_error(r);
            return false;
        }
        if (ev.type == YAML_MAPPING_END_EVENT || ev.type == YAML_SEQUENCE_END_EVENT) {
            yaml_event_delete(&ev);
            return true;
        }
        CfgNode *child = read_node(r, &ev, depth + 1);
        yaml_event_delete(&ev);
        if (!child)
            return false;
        if (n->type == CFG_SEQ) {
            g_ptr_array_add(n->items, child);
            continue;
        }
        /* a map: child is the key, the next node its value */
        if (child->type != CFG_SCALAR) {
            r->err = cfg_err(child, "a mapping key must be a plain scalar; expected key: value");
            cfg_free(child);
            return false;
        }
        for (guint i = 0; i < n->keys->len; i++) {
            CfgNode *k = g_ptr_array_index(n->keys, i);
            if (strcmp(k->scalar, child->scalar) == 0) {
                r->err = cfg_err(child, "duplicate key '%s' (first at line %d); expected each key once",
                                 child->scalar, k->line);
                cfg_free(child);
                return false;
            }
        }
        yaml_event_t vev;
        if (!yaml_parser_parse(&r->parser, &vev)) {
            reader_syntax_error(r);
            cfg_free(child);
            return false;
        }
        CfgNode *val = read_node(r, &vev, depth + 1);
        yaml_event_delete(&vev);
        if (!val) {
            cfg_free(child);
            return false;
        }
        g_ptr_array_add(n->keys, child);
        g_ptr_array_add(n->items, val);
    }
}

static CfgNode *read_node(Reader *r, yaml_event_t *ev, int depth)
{
    if (depth > 64) {
        reader_fail_at(r, &ev->start_mark, "nesting deeper than 64 levels; expected a flatter document");
        return NULL;
    }
    switch (ev->type) {
    case YAML_SCALAR_EVENT: {
        CfgNode *n = node_new(CFG_SCALAR, r->file, &ev->start_mark);
        n->scalar = g_strndup((const char *)ev->data.scalar.value, ev->data.scalar.length);
        if (strlen(n->scalar) != ev->data.scalar.length) {
            r->err = cfg_err(n, "NUL byte inside a scalar; expected text");
            cfg_free(n);
            return NULL;
        }
        n->quoted = ev->data.scalar.style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
                    ev->data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE;
        return n;
    }
    case YAML_MAPPING_START_EVENT:
    case YAML_SEQUENCE_START_EVENT: {
        CfgNode *n = node_new(ev->type == YAML_MAPPING_START_EVENT ? CFG_MAP : CFG_SEQ, r->file, &ev->start_mark);
        if (!read_children(r, n, depth)) {
            cfg_free(n);
            return NULL;
        }
        return n;
    }
    case YAML_ALIAS_EVENT:
        reader_fail_at(r, &ev->start_mark, "YAML aliases are not supported; expected the value written out");
        return NULL;
    default:
        reader_fail_at(r, &ev->start_mark, "unexpected YAML structure; expected a value");
        return NULL;
    }
}

/* Parses a whole stream: exactly one document whose root is read. */
static CfgNode *read_stream(Reader *r)
{
    CfgNode *root = NULL;
    bool done = false;
    while (!done && !r->err) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&r->parser, &ev)) {
            reader_syntax_error(r);
            break;
        }
        switch (ev.type) {
        case YAML_STREAM_END_EVENT:
            done = true;
            break;
        case YAML_STREAM_START_EVENT:
        case YAML_DOCUMENT_START_EVENT:
        case YAML_DOCUMENT_END_EVENT:
            break;
        default:
            if (root) {
                reader_fail_at(r, &ev.start_mark, "a second YAML document; expected one document per file");
                break;
            }
            root = read_node(r, &ev, 0);
            if (!root && !r->err)
                reader_fail_at(r, &ev.start_mark, "unreadable document; expected a mapping");
            break;
        }
        yaml_event_delete(&ev);
    }
    if (r->err) {
        cfg_free(root);
        return NULL;
    }
    if (!root || cfg_is_null(root)) {
        cfg_free(root);
        r->err = g_strdup_printf("%s:1:1: empty document; expected a YAML mapping", r->file);
        return NULL;
    }
    return root;
}

CfgNode *cfg_parse_string(const char *text, const char *name, char **err)
{
    Reader r = {.file = g_intern_string(name), .text = text};
    yaml_parser_initialize(&r.parser);
    yaml_parser_set_input_string(&r.parser, (const unsigned char *)text, strlen(text));
    CfgNode *root = read_stream(&r);
    yaml_parser_delete(&r.parser);
    if (!root)
        *err = r.err;
    return root;
}

CfgNode *cfg_load_file(const char *path, char **err)
{
    gchar *text = NULL;
    gsize len = 0;
    GError *gerr = NULL;
    if (!g_file_get_contents(path, &text, &len, &gerr)) {
        *err = g_strdup_printf("%s:1:1: cannot read file (%s); expected a readable YAML file", path, gerr->message);
        g_error_free(gerr);
        return NULL;
    }
    if (strlen(text) != len) {
        int line, col;
        offset_position(text, strlen(text), &line, &col);
        *err = g_strdup_printf("%s:%d:%d: file contains a NUL byte; expected YAML text", path, line, col);
        g_free(text);
        return NULL;
    }
    CfgNode *root = cfg_parse_string(text, path, err);
    g_free(text);
    return root;
}
