# Structs for the differential test of the renderers: fields in
# alphabetical order, as the term carries them.
defmodule BsTerms.Order do
  defstruct [:id, :items, :status, :total]
end

defmodule BsTerms.Oops do
  defexception [:message, :reason]
end
