// An output stream that writes to two others: the main job's --verbose sends its steps' output to
// the console and to its log at once.
#pragma once

#include <ostream>
#include <streambuf>

namespace ropecheck {

class TeeStream : public std::ostream {
 public:
  TeeStream(std::ostream& first, std::ostream& second) : std::ostream(&buffer_), buffer_(first, second) {}

 private:
  class Buffer : public std::streambuf {
   public:
    Buffer(std::ostream& first, std::ostream& second) : first_(first), second_(second) {}

   protected:
    int_type overflow(int_type c) override {
      if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
      const char ch = traits_type::to_char_type(c);
      first_.put(ch);
      second_.put(ch);
      return c;
    }
    std::streamsize xsputn(const char* text, std::streamsize n) override {
      first_.write(text, n);
      second_.write(text, n);
      return n;
    }
    int sync() override {
      first_.flush();
      second_.flush();
      return 0;
    }

   private:
    std::ostream& first_;
    std::ostream& second_;
  };
  Buffer buffer_;
};

}  // namespace ropecheck
