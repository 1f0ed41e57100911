// A small JSON reader for the test data (tests/corpus/cases.json): objects,
// arrays, strings (with \u escapes, written out as UTF-8), numbers, true,
// false and null. Enough for data files the tests own, not a general library.
#ifndef CUABI_TESTS_COMMON_JSON_H
#define CUABI_TESTS_COMMON_JSON_H

#include <cstdint>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

namespace cuabi_test {
namespace json {

struct Value {
  enum class Type { kNull, kBool, kNumber, kString, kArray, kObject };
  Type type = Type::kNull;
  bool boolean = false;
  double number = 0;
  std::string string;
  std::vector<Value> array;
  std::vector<std::pair<std::string, Value>> object;  // in file order

  // The member `key` of an object, or nullptr.
  const Value* Get(const std::string& key) const {
    for (const auto& kv : object)
      if (kv.first == key) return &kv.second;
    return nullptr;
  }
};

namespace detail {

class Parser {
 public:
  explicit Parser(const std::string& text) : s_(text) {}

  bool Document(Value* out, std::string* error) {
    if (!Parse(out) || (Skip(), i_ != s_.size())) {
      if (error_.empty()) error_ = "unexpected text after the document";
      *error = "line " + std::to_string(Line()) + ": " + error_;
      return false;
    }
    return true;
  }

 private:
  size_t Line() const {
    size_t line = 1;
    for (size_t k = 0; k < i_ && k < s_.size(); ++k) line += s_[k] == '\n';
    return line;
  }
  bool Fail(const std::string& why) {
    if (error_.empty()) error_ = why;
    return false;
  }
  void Skip() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\r' || s_[i_] == '\t'))
      ++i_;
  }
  bool Literal(const char* word) {
    const std::string w(word);
    if (s_.compare(i_, w.size(), w) != 0) return Fail("expected '" + w + "'");
    i_ += w.size();
    return true;
  }
  static void Utf8(uint32_t cp, std::string* out) {
    if (cp < 0x80) {
      out->push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  }
  bool Hex4(uint32_t* cp) {
    if (s_.size() - i_ < 4) return Fail("truncated \\u escape");
    *cp = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = s_[i_++];
      *cp <<= 4;
      if (c >= '0' && c <= '9')
        *cp |= static_cast<uint32_t>(c - '0');
      else if (c >= 'a' && c <= 'f')
        *cp |= static_cast<uint32_t>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        *cp |= static_cast<uint32_t>(c - 'A' + 10);
      else
        return Fail("bad \\u escape");
    }
    return true;
  }
  bool String(std::string* out) {
    if (i_ >= s_.size() || s_[i_] != '"') return Fail("expected a string");
    ++i_;
    while (i_ < s_.size() && s_[i_] != '"') {
      const char c = s_[i_++];
      if (static_cast<unsigned char>(c) < 0x20) return Fail("control character in a string");
      if (c != '\\') {
        out->push_back(c);
        continue;
      }
      if (i_ >= s_.size()) break;
      const char e = s_[i_++];
      switch (e) {
        case '"':
          out->push_back('"');
          break;
        case '\\':
          out->push_back('\\');
          break;
        case '/':
          out->push_back('/');
          break;
        case 'b':
          out->push_back('\b');
          break;
        case 'f':
          out->push_back('\f');
          break;
        case 'n':
          out->push_back('\n');
          break;
        case 'r':
          out->push_back('\r');
          break;
        case 't':
          out->push_back('\t');
          break;
        case 'u': {
          uint32_t cp = 0;
          if (!Hex4(&cp)) return false;
          if (cp >= 0xD800 && cp < 0xDC00) {
            uint32_t lo = 0;
            if (!Literal("\\u") || !Hex4(&lo) || lo < 0xDC00 || lo > 0xDFFF)
              return Fail("unpaired surrogate in a \\u escape");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          }
          Utf8(cp, out);
          break;
        }
        default:
          return Fail(std::string("bad escape \\") + e);
      }
    }
    if (i_ >= s_.size()) return Fail("unterminated string");
    ++i_;
    return true;
  }
  bool Parse(Value* v) {
    Skip();
    if (i_ >= s_.size()) return Fail("unexpected end of the document");
    const char c = s_[i_];
    if (c == '{') {
      v->type = Value::Type::kObject;
      ++i_;
      Skip();
      if (i_ < s_.size() && s_[i_] == '}') return ++i_, true;
      for (;;) {
        Skip();
        std::string key;
        if (!String(&key)) return false;
        Skip();
        if (i_ >= s_.size() || s_[i_] != ':') return Fail("expected ':'");
        ++i_;
        Value member;
        if (!Parse(&member)) return false;
        v->object.emplace_back(std::move(key), std::move(member));
        Skip();
        if (i_ < s_.size() && s_[i_] == ',') {
          ++i_;
          continue;
        }
        if (i_ < s_.size() && s_[i_] == '}') return ++i_, true;
        return Fail("expected ',' or '}'");
      }
    }
    if (c == '[') {
      v->type = Value::Type::kArray;
      ++i_;
      Skip();
      if (i_ < s_.size() && s_[i_] == ']') return ++i_, true;
      for (;;) {
        Value item;
        if (!Parse(&item)) return false;
        v->array.push_back(std::move(item));
        Skip();
        if (i_ < s_.size() && s_[i_] == ',') {
          ++i_;
          continue;
        }
        if (i_ < s_.size() && s_[i_] == ']') return ++i_, true;
        return Fail("expected ',' or ']'");
      }
    }
    if (c == '"') {
      v->type = Value::Type::kString;
      return String(&v->string);
    }
    if (c == 't' || c == 'f') {
      v->type = Value::Type::kBool;
      v->boolean = c == 't';
      return Literal(c == 't' ? "true" : "false");
    }
    if (c == 'n') return Literal("null");
    const char* start = s_.c_str() + i_;
    char* end = nullptr;
    v->number = std::strtod(start, &end);
    if (end == start) return Fail(std::string("unexpected '") + c + "'");
    v->type = Value::Type::kNumber;
    i_ += static_cast<size_t>(end - start);
    return true;
  }

  const std::string& s_;
  size_t i_ = 0;
  std::string error_;
};

}  // namespace detail

// Parses `text` into *out; false with the line and reason in *error if it is
// not one well-formed JSON value.
inline bool Parse(const std::string& text, Value* out, std::string* error) {
  return detail::Parser(text).Document(out, error);
}

}  // namespace json
}  // namespace cuabi_test

#endif  // CUABI_TESTS_COMMON_JSON_H
