-- Glob patterns in linear time. (The file's name sorts it before the files
-- whose macros use it: a macro is bound when it is created.)

-- glob_class_members: (glob_class_members(class)) the members of a glob
-- class token ([abc], [!a-z]) as GLOB reads them, left to right: c-d
-- whenever a - follows c, c otherwise; a range written backwards, which
-- GLOB's byte comparison never matches, is left out. Used by glob_regex.
CREATE OR REPLACE MACRO glob_class_members(class) AS
    list_filter(regexp_extract_all(regexp_extract(class, '^\[!?([\s\S]*)\]$', 1), '[\s\S]-[\s\S]|[\s\S]'),
                m -> length(m) <> 3 OR m[1] <= m[3]);

-- glob_class_regex: (glob_class_regex(class)) the RE2 class of a glob class
-- token, each character escaped; with no member left, nothing ([...]) or
-- any character ([!...]). Used by glob_regex.
CREATE OR REPLACE MACRO glob_class_regex(class) AS
    CASE WHEN len(glob_class_members(class)) = 0
         THEN CASE WHEN starts_with(class, '[!') THEN '[\s\S]' ELSE '[^\s\S]' END
         ELSE '[' || CASE WHEN starts_with(class, '[!') THEN '^' ELSE '' END
              || array_to_string(list_transform(glob_class_members(class),
                     m -> CASE WHEN length(m) = 3 THEN regexp_escape(m[1]) || '-' || regexp_escape(m[3])
                               ELSE regexp_escape(m) END), '')
              || ']'
    END;

-- glob_regex: glob_regex(pattern) is the RE2 regular expression that says
-- what `name GLOB pattern` says, for regexp_full_match(name,
-- glob_regex(pattern)). RE2 matches in time linear in the name; DuckDB's
-- GLOB backtracks, so that a pattern of a few stars against a long name
-- took seconds (`*T*T*T*X` on a 300-character name: 18 s), forty stars
-- longer than anyone waits, and a query cannot be interrupted inside one
-- call. The patterns a user gives on the command line (events
-- --include/--exclude marks, report --hist objects) are matched through it.
-- * is any text (newlines too), ? one character, [abc], [a-z] and [!a-z]
-- a class (a ] first in it is one of its characters), \c the character c.
-- A pattern GLOB never matches (a [ that closes no class, a \ at the
-- end) gives an expression that matches nothing. Where it differs from
-- GLOB: ? and a class take one character where GLOB takes one byte (so
-- that T?sk matches Täsk). NULL gives NULL.
-- Example: SELECT regexp_full_match('Task_10ms_3', glob_regex('Task_*_[0-9]'));
CREATE OR REPLACE MACRO glob_regex(pattern) AS
    CASE WHEN pattern IS NOT NULL THEN '(?s)' || coalesce(array_to_string(list_transform(
        -- The tokens: a class, an escaped character (or a \ at the end), one
        -- character. A class is parsed as GLOB parses it: [ or [!, members,
        -- ]; a member is c-d (a range: a c followed by - always starts one,
        -- and d may be ]) or c; the first member may be ], which closes the
        -- class anywhere else. A [ that starts no class is a token alone.
        regexp_extract_all(pattern, '\[(?:!(?:[\s\S]-[\s\S](?:[^\]]-[\s\S]|[^\]][^\]-]*[^\]-]-[\s\S])*(?:[^\]][^\]-]*)?|[\s\S][^\]-]*(?:[^\]-]-[\s\S](?:[^\]]-[\s\S]|[^\]][^\]-]*[^\]-]-[\s\S])*(?:[^\]][^\]-]*)?)?)|(?:[^!]-[\s\S](?:[^\]]-[\s\S]|[^\]][^\]-]*[^\]-]-[\s\S])*(?:[^\]][^\]-]*)?|[^!][^\]-]*(?:[^\]-]-[\s\S](?:[^\]]-[\s\S]|[^\]][^\]-]*[^\]-]-[\s\S])*(?:[^\]][^\]-]*)?)?))\]|\\[\s\S]?|[\s\S]'),
        tok -> CASE
            WHEN tok = '*' THEN '.*'
            WHEN tok = '?' THEN '.'
            WHEN tok IN ('[', '\') THEN '[^\s\S]'
            WHEN tok[1] = '\' THEN regexp_escape(tok[2])
            WHEN tok[1] = '[' AND length(tok) > 1 THEN glob_class_regex(tok)
            ELSE regexp_escape(tok)
        END), ''), '') END;
