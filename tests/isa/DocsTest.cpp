#include "tpu/isa/Isa.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace {

std::string readSourceFile(const std::string &relativePath) {
  std::ifstream file(std::string(TPU_SOURCE_DIR) + "/" + relativePath);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

} // namespace

TEST(Docs, IsaDocEmbedsTheGeneratedOpcodeTable) {
  const std::string begin = "<!-- opcode-table:begin -->\n";
  const std::string end = "<!-- opcode-table:end -->";
  std::string doc = readSourceFile("docs/isa.md");
  size_t tableStart = doc.find(begin);
  ASSERT_NE(tableStart, std::string::npos) << "docs/isa.md lacks " << begin;
  tableStart += begin.size();
  size_t tableEnd = doc.find(end, tableStart);
  ASSERT_NE(tableEnd, std::string::npos) << "docs/isa.md lacks " << end;
  EXPECT_EQ(doc.substr(tableStart, tableEnd - tableStart), tpu::isa::opcodeTableMarkdown())
      << "docs/isa.md is out of date: replace the text between the markers with the output of "
         "`tpu-objdump --isa-table`";
}

TEST(Docs, IsaDocExampleAssembles) {
  std::string doc = readSourceFile("docs/isa.md");
  const std::string fence = "```\n";
  size_t start = doc.find(fence + "# x:");
  ASSERT_NE(start, std::string::npos) << "docs/isa.md lost its example program";
  start += fence.size();
  std::vector<tpu::isa::Instruction> program =
      tpu::isa::assemble(doc.substr(start, doc.find(fence, start) - start));
  ASSERT_EQ(program.size(), 11u);
  EXPECT_EQ(program.back().opcode, tpu::isa::Opcode::Halt);
}
