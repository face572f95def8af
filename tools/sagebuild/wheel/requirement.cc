// PEP 508 as a recursive-descent parser over the grammar in the spec
// (reference/spec-core-metadata.rst points to "Dependency specifiers"):
//   specification = wsp* ( url_req | name_req ) wsp*
//   name_req      = name wsp* extras? wsp* versionspec? wsp* quoted_marker?
//   url_req       = name wsp* extras? wsp* '@' wsp* URI wsp+ quoted_marker?
//   marker        = marker_and ('or' marker_and)*
//   marker_and    = marker_expr ('and' marker_expr)*
//   marker_expr   = marker_var marker_op marker_var | '(' marker ')'
// Errors name the column where parsing stopped and what was expected there.
#include "sagebuild/wheel/requirement.h"

#include <algorithm>
#include <array>

#include "sagebuild/common/text.h"
#include "sagebuild/wheel/names.h"

namespace sb::wheel {
namespace {

// The environment markers of the spec, plus `extras` / `dependency_groups`
// (lock files, PEP 751).
constexpr std::array<std::string_view, 14> kVariables = {"python_version",
                                                         "python_full_version",
                                                         "os_name",
                                                         "sys_platform",
                                                         "platform_release",
                                                         "platform_system",
                                                         "platform_version",
                                                         "platform_machine",
                                                         "platform_python_implementation",
                                                         "implementation_name",
                                                         "implementation_version",
                                                         "extra",
                                                         "extras",
                                                         "dependency_groups"};

// Pre-PEP 508 spellings that tools still accept, with their modern names.
constexpr std::array<std::pair<std::string_view, std::string_view>, 6> kLegacyVariables = {{
    {"os.name", "os_name"},
    {"sys.platform", "sys_platform"},
    {"platform.version", "platform_version"},
    {"platform.machine", "platform_machine"},
    {"platform.python_implementation", "platform_python_implementation"},
    {"python_implementation", "platform_python_implementation"},
}};

// Longest first, so "<=" is not read as "<".
constexpr std::array<std::string_view, 8> kCompareOps = {"===", "<=", "!=", "==", ">=", "~=", "<", ">"};

bool is_wsp(char c) { return c == ' ' || c == '\t'; }

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  std::string error;

  bool done() {
    skip_wsp();
    return pos_ >= text_.size();
  }
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  std::size_t pos() const { return pos_; }
  void skip_wsp() {
    while (is_wsp(peek())) ++pos_;
  }
  bool eat(char c) {
    if (peek() != c) return false;
    ++pos_;
    return true;
  }

  bool fail(std::string expected) {
    if (error.empty()) {
      std::string found = pos_ < text_.size() ? "'" + clip(text_.substr(pos_)) + "'" : "the end";
      error = "at column " + std::to_string(pos_ + 1) + " of '" + clip(text_) + "': found " + found + ", expected " +
              std::move(expected);
    }
    return false;
  }

  // identifier = letterOrDigit ( ('-' | '_' | '.')* letterOrDigit )*
  std::optional<std::string> identifier() {
    std::size_t start = pos_;
    if (!is_ascii_alnum(peek())) return std::nullopt;
    std::size_t end = ++pos_;
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (is_ascii_alnum(c))
        end = ++pos_;
      else if (c == '-' || c == '_' || c == '.')
        ++pos_;
      else
        break;
    }
    pos_ = end;  // a trailing run of separators is not part of the name
    return std::string(text_.substr(start, end - start));
  }

  bool extras(std::vector<std::string>& out) {
    skip_wsp();
    if (peek() != '[') return true;
    ++pos_;
    skip_wsp();
    if (peek() == ']') {
      ++pos_;
      return true;
    }
    while (true) {
      skip_wsp();
      auto id = identifier();
      if (!id) return fail("an extra name");
      out.push_back(*id);
      skip_wsp();
      if (peek() == ']') {
        ++pos_;
        return true;
      }
      if (peek() != ',') return fail("',' or ']' in the extras list");
      ++pos_;
    }
  }

  // versionspec = '(' version_many ')' | version_many; ends at ';' or the end.
  bool version_spec(SpecifierSet& out) {
    skip_wsp();
    bool paren = peek() == '(';
    if (paren) ++pos_;
    std::size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] != ';' && !(paren && text_[pos_] == ')')) ++pos_;
    std::string_view spec = text_.substr(start, pos_ - start);
    if (paren) {
      if (peek() != ')') return fail("')' closing the version specifier");
      ++pos_;
    }
    while (!spec.empty() && is_wsp(spec.back())) spec.remove_suffix(1);
    if (!spec.empty() && spec.back() == ',') spec.remove_suffix(1);  // version_many allows a trailing ','
    std::string why;
    auto set = parse_specifier_set(spec, &why);
    if (!set) {
      pos_ = start;
      return fail("a version specifier (" + why + ")");
    }
    out = std::move(*set);
    return true;
  }

  bool url(std::string& out) {
    skip_wsp();
    std::size_t start = pos_;
    while (pos_ < text_.size() && !is_wsp(text_[pos_])) ++pos_;
    out = std::string(text_.substr(start, pos_ - start));
    if (out.empty()) return fail("a URL after '@'");
    if (out.find(':') == std::string::npos) {
      pos_ = start;
      return fail("a URL with a scheme (e.g. https://...) after '@'");
    }
    return true;
  }

  // ---- markers ----

  std::optional<Marker> marker_or() { return chain(Marker::Kind::Or, "or"); }

 private:
  std::optional<Marker> marker_and() { return chain(Marker::Kind::And, "and"); }

  bool keyword(std::string_view word) {
    skip_wsp();
    if (text_.substr(pos_, word.size()) != word) return false;
    char after = pos_ + word.size() < text_.size() ? text_[pos_ + word.size()] : '\0';
    if (is_ascii_alnum(after) || after == '_' || after == '.') return false;
    pos_ += word.size();
    return true;
  }

  std::optional<Marker> chain(Marker::Kind kind, std::string_view word) {
    auto first = kind == Marker::Kind::Or ? marker_and() : marker_expr();
    if (!first) return std::nullopt;
    Marker node;
    node.kind = kind;
    node.children.push_back(std::move(*first));
    while (keyword(word)) {
      auto next = kind == Marker::Kind::Or ? marker_and() : marker_expr();
      if (!next) return std::nullopt;
      node.children.push_back(std::move(*next));
    }
    if (node.children.size() == 1) return std::move(node.children.front());
    return node;
  }

  std::optional<Marker> marker_expr() {
    skip_wsp();
    if (peek() == '(') {
      // The grammar recurses once per '('; a hostile METADATA line of a
      // million of them would overflow the stack.
      if (depth_ >= kMaxMarkerDepth) {
        fail("at most " + std::to_string(kMaxMarkerDepth) + " nested parentheses in a marker");
        return std::nullopt;
      }
      ++pos_;
      ++depth_;
      auto inner = marker_or();
      --depth_;
      if (!inner) return std::nullopt;
      skip_wsp();
      if (peek() != ')') {
        fail("')' or 'and'/'or'");
        return std::nullopt;
      }
      ++pos_;
      return inner;
    }
    Marker m;
    if (!marker_var(m.lhs) || !marker_op(m.op) || !marker_var(m.rhs)) return std::nullopt;
    return m;
  }

  bool marker_var(MarkerValue& out) {
    skip_wsp();
    char q = peek();
    if (q == '\'' || q == '"') {
      std::size_t close = text_.find(q, pos_ + 1);
      if (close == std::string_view::npos) return fail(std::string("a closing ") + q);
      out = {false, std::string(text_.substr(pos_ + 1, close - pos_ - 1))};
      pos_ = close + 1;
      return true;
    }
    std::size_t start = pos_;
    while (is_ascii_alnum(peek()) || peek() == '_' || peek() == '.') ++pos_;
    std::string_view word = text_.substr(start, pos_ - start);
    for (auto v : kVariables)
      if (word == v) {
        out = {true, std::string(v)};
        return true;
      }
    for (auto [legacy, modern] : kLegacyVariables)
      if (word == legacy) {
        out = {true, std::string(modern)};
        return true;
      }
    pos_ = start;
    return fail("a marker variable (python_version, sys_platform, extra, ...) or a quoted string");
  }

  bool marker_op(std::string& out) {
    skip_wsp();
    for (auto op : kCompareOps)
      if (text_.substr(pos_, op.size()) == op) {
        pos_ += op.size();
        out = op;
        return true;
      }
    if (keyword("in")) {
      out = "in";
      return true;
    }
    std::size_t start = pos_;
    if (keyword("not") && keyword("in")) {
      out = "not in";
      return true;
    }
    pos_ = start;
    return fail("a marker operator (==, !=, <, <=, >, >=, ~=, ===, in, not in)");
  }

  static constexpr int kMaxMarkerDepth = 64;
  std::string_view text_;
  std::size_t pos_ = 0;
  int depth_ = 0;
};

std::string child_str(const Marker& child, Marker::Kind parent) {
  bool paren = parent == Marker::Kind::And && child.kind == Marker::Kind::Or;
  return paren ? "(" + child.str() + ")" : child.str();
}

}  // namespace

std::string MarkerValue::str() const { return is_variable ? text : "\"" + text + "\""; }

std::string Marker::str() const {
  if (kind == Kind::Compare) return lhs.str() + " " + op + " " + rhs.str();
  std::string out;
  for (std::size_t i = 0; i < children.size(); ++i) {
    if (i) out += kind == Kind::And ? " and " : " or ";
    out += child_str(children[i], kind);
  }
  return out;
}

std::string Requirement::str() const {
  std::string out = name;
  if (!extras.empty()) {
    out += "[";
    for (std::size_t i = 0; i < extras.size(); ++i) out += (i ? "," : "") + extras[i];
    out += "]";
  }
  if (url)
    out += " @ " + *url;
  else
    out += specifier.str();
  if (marker) out += (url ? " ; " : "; ") + marker->str();
  return out;
}

std::optional<Marker> parse_marker(std::string_view text, std::string* why) {
  Parser p(text);
  auto m = p.marker_or();
  if (m && !p.done()) {
    p.fail("'and', 'or' or the end of the marker");
    m.reset();
  }
  if (!m && why) *why = "invalid marker " + p.error;
  return m;
}

namespace {

// The text after ';': a marker, reported against the whole requirement.
bool parse_marker_tail(std::string_view text, std::string_view tail, Requirement& r, std::string* why) {
  std::string marker_why;
  auto m = parse_marker(tail, &marker_why);
  if (!m) {
    if (why) *why = "invalid requirement '" + clip(text) + "': " + marker_why;
    return false;
  }
  r.marker = std::move(*m);
  return true;
}

// After "name[extras] @": the URL, then optionally wsp+ ';' marker. The
// whitespace is required because ';' is legal inside a URL.
bool parse_url_tail(Parser& p, std::string_view text, Requirement& r, std::string* why) {
  std::string url;
  if (!p.url(url)) return false;
  r.url = url;
  std::size_t url_end = p.pos();
  if (p.done()) return true;
  if (p.peek() != ';' || p.pos() == url_end) return p.fail("whitespace, then ';' and a marker after the URL");
  return parse_marker_tail(text, text.substr(p.pos() + 1), r, why);
}

}  // namespace

std::optional<Requirement> parse_requirement(std::string_view text, std::string* why) {
  Parser p(text);
  Requirement r;
  std::string marker_why;
  bool ok = [&] {
    p.skip_wsp();
    auto name = p.identifier();
    if (!name) return p.fail("a project name (letters, digits, '-', '_', '.')");
    r.name = *name;
    if (!p.extras(r.extras)) return false;
    p.skip_wsp();
    if (p.eat('@')) return parse_url_tail(p, text, r, why);
    if (p.peek() != ';' && !p.done() && !p.version_spec(r.specifier)) return false;
    if (p.done()) return true;
    if (p.peek() != ';') return p.fail("a version specifier, '@' URL or ';' marker");
    return parse_marker_tail(text, text.substr(p.pos() + 1), r, why);
  }();
  if (ok) return r;
  if (why && !p.error.empty()) *why = "invalid requirement " + p.error;
  return std::nullopt;
}

Requirement pin_requirement(std::string_view name, const Version& version) {
  Specifier s;
  s.op = Operator::Equal;
  s.version = version;
  Requirement r;
  r.name = std::string(name);
  r.specifier = SpecifierSet({s});
  return r;
}

}  // namespace sb::wheel
