#pragma once
// What the data layer tells the user: messages that never stop the work (addFiles, prepare, buildProblem's
// warnings) and DatasetError for what stops it; each text names the file, plane or quantity concerned.
#include <stdexcept>
#include <string>
#include <vector>

namespace wfs {

class DatasetError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// A file that could not be read whole: unreadable, or planes lost when read (DatasetFile::damage), as a file cut short
// or still being written is. Live mode waits for such a stack to change before it calls it failed.
class IncompleteFileError : public DatasetError {
public:
    using DatasetError::DatasetError;
};

enum class MessageLevel { Info, Warning, Error };
const char* messageLevelName(MessageLevel level); // "info", "warning", "error"

struct DatasetMessage {
    MessageLevel level = MessageLevel::Info;
    std::string file; // the file concerned (as given), or empty
    std::string text; // a whole sentence that already names the file or plane
};
// The texts of the messages at `level`, one per line (empty when there are none).
std::string messagesText(const std::vector<DatasetMessage>& messages, MessageLevel level);

} // namespace wfs
