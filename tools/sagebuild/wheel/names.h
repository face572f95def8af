// Project names (reference/spec-name-normalization.rst, core metadata Name):
// the canonical form used for comparison and the escaped form that wheel
// file names and .dist-info directories use.
#pragma once

#include <string>
#include <string_view>

namespace sb::wheel {

// PEP 503: lowercase, every run of '-', '_' and '.' becomes one '-'.
// "Sage_Attention" -> "sage-attention".
std::string canonicalize_name(std::string_view name);

// As wheel file names want it: lowercase, every run of '-', '_' and '.'
// becomes one '_'. "Sage-Attention" -> "sage_attention".
std::string wheel_escape_name(std::string_view name);

// Core metadata Name: ASCII, ^([A-Z0-9]|[A-Z0-9][A-Z0-9._-]*[A-Z0-9])$,
// case-insensitive.
bool is_valid_project_name(std::string_view name);

// Whether two names denote the same project (equal after canonicalization).
bool same_project(std::string_view a, std::string_view b);

// Characters a wheel file name's name part may use without error:
// ASCII letters, digits, '.', '_' (non-ASCII letters are judged by the caller).
bool is_ascii_name_char(char c);
bool is_ascii_alnum(char c);

// ASCII lowercase, leaving other bytes alone.
std::string ascii_lower(std::string_view s);

}  // namespace sb::wheel
