# Structs for the differential test of the renderers: Elixir prints a
# struct's fields in the order its module defines them, whatever order
# the map holds them in, so one of them defines its own out of
# alphabetical order.
defmodule BsTerms.Order do
  defstruct [:id, :items, :status, :total]
end

defmodule BsTerms.Line do
  defstruct [:sku, :qty, :at, price: 0]
end

defmodule BsTerms.Oops do
  defexception [:message, :reason]
end
